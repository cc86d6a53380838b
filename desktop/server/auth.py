"""Auth: the service token (a secret in the data dir) as a Bearer header, or a browser session
(a revocable random id in an HttpOnly cookie, never the token).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import re
import secrets
import threading
import time
from pathlib import Path

from aiohttp import web

from desktop.config import read_json_file, write_private_file
from desktop.server.errors import Handler, data_response, error_response

log = logging.getLogger("desk.server.auth")

COOKIE_NAME = "desk_session"
MAX_BROWSER_SESSIONS = 64  # the oldest is dropped past this (each login makes one)
# How the request got in: "bearer", "cookie", or "ticket" (a connect its handler must check).
AUTH_METHOD = web.RequestKey("auth_method", str)
_CONNECT_PATH = re.compile(r"^/api/pty/[^/]+/connect$")
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def load_or_create_token(path: Path) -> str:
    """The service's secret token, created (0600) on first use."""
    try:
        token = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        token = ""
    if len(token) < 32:
        token = secrets.token_urlsafe(32)
        write_private_file(path, token + "\n")
    elif path.stat().st_mode & 0o077:
        path.chmod(0o600)
    return token


def _digest(session_id: str) -> str:
    return hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()


class BrowserSessions:
    """The browser sessions signed in with the token: random ids, stored only as hashes.

    Reads are in memory; `create` and `revoke` also rewrite the 0600 file (blocking: call
    them through a thread)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._created: dict[str, float] = {}
        try:
            stored = read_json_file(path) or {}
        except ValueError as exc:
            log.warning("ignoring %s (%s): browsers sign in again", path, exc)
            stored = {}
        sessions = stored.get("sessions")
        if isinstance(sessions, dict):
            for digest, created in sessions.items():
                if isinstance(digest, str) and isinstance(created, int | float):
                    self._created[digest] = float(created)

    def valid(self, session_id: str | None) -> bool:
        return bool(session_id) and _digest(session_id or "") in self._created

    def create(self) -> str:
        session_id = secrets.token_urlsafe(32)
        with self._lock:
            self._created[_digest(session_id)] = time.time()
            while len(self._created) > MAX_BROWSER_SESSIONS:
                del self._created[min(self._created, key=self._created.__getitem__)]
            self._save()
        return session_id

    def revoke(self, session_id: str) -> bool:
        with self._lock:
            removed = self._created.pop(_digest(session_id), None) is not None
            if removed:
                self._save()
        return removed

    def _save(self) -> None:
        write_private_file(self.path, json.dumps({"sessions": self._created}) + "\n")


def token_matches(expected: str, offered: str | None) -> bool:
    """Constant-time comparison; any header text, even bytes that were not UTF-8 (aiohttp
    hands them over as lone surrogates), is compared, never an error."""
    if offered is None:
        return False
    return hmac.compare_digest(expected.encode(), offered.encode("utf-8", "surrogatepass"))


def own_origin(request: web.Request) -> str:
    return f"{request.scheme}://{request.host}"


def same_origin_or_none(request: web.Request) -> bool:
    """False for a WebSocket upgrade that a page of another origin asked for."""
    if request.headers.get("Upgrade", "").lower() != "websocket":
        return True
    origin = request.headers.get("Origin")
    return origin is None or origin == own_origin(request)


def request_auth(request: web.Request, token: str, sessions: BrowserSessions) -> str | None:
    """How the request got in: "bearer" (the token), "cookie" (a browser session), or None."""
    header = request.headers.get("Authorization", "")
    if header[:7].lower() == "bearer " and token_matches(token, header[7:].strip()):
        return "bearer"
    if sessions.valid(request.cookies.get(COOKIE_NAME)):
        return "cookie"
    return None


def make_auth_middleware(token: str, sessions: BrowserSessions) -> web.middleware:  # type: ignore[valid-type]
    @web.middleware
    async def auth_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        if not request.path.startswith("/api/"):
            return await handler(request)
        if not same_origin_or_none(request):
            # A page of another origin may open a WebSocket to us (browsers allow it): only
            # this origin's page, or a client that sends no Origin, may connect a terminal.
            return error_response(403, "auth.forbidden", "Cross-origin WebSocket refused.")
        how = request_auth(request, token, sessions)
        request[AUTH_METHOD] = how or "ticket"
        if how is None:
            # A WebSocket connect may instead carry a single-use ticket, checked by its handler.
            if (
                request.method == "GET"
                and "ticket" in request.query
                and _CONNECT_PATH.match(request.path)
            ):
                return await handler(request)
            return error_response(
                401, "auth.required", "Sign in: send the service token as a Bearer header."
            )
        if how == "cookie" and request.method not in _SAFE_METHODS:
            # SameSite=Strict already blocks cross-site cookies; this also covers old browsers.
            origin = request.headers.get("Origin")
            if origin is not None and origin != own_origin(request):
                return error_response(403, "auth.forbidden", "Cross-origin request refused.")
        return await handler(request)

    return auth_middleware


async def login_redirect(
    request: web.Request, token: str, sessions: BrowserSessions
) -> web.Response:
    """`GET /?token=T`: trade the token for a new browser session's cookie (never the token
    itself) and drop the token from the address bar."""
    response = web.Response(status=303, headers={"Location": "/", "Cache-Control": "no-store"})
    if token_matches(token, request.query.get("token")):
        session_id = await asyncio.to_thread(sessions.create)
        response.set_cookie(
            COOKIE_NAME,
            session_id,
            httponly=True,
            samesite="Strict",
            path="/",
            max_age=10 * 365 * 86400,
        )
    return response


def setup_auth_routes(app: web.Application, sessions: BrowserSessions) -> None:
    async def sign_out(request: web.Request) -> web.Response:
        """Revoke the caller's browser session (a Bearer caller has none: nothing happens)."""
        session_id = request.cookies.get(COOKIE_NAME)
        revoked = bool(session_id) and await asyncio.to_thread(sessions.revoke, session_id or "")
        response = data_response({"revoked": revoked})
        response.del_cookie(COOKIE_NAME, path="/")
        return response

    app.router.add_delete("/api/auth/session", sign_out)
