"""Token auth: a secret in the data dir, accepted as a Bearer header or an HttpOnly cookie."""

from __future__ import annotations

import hmac
import re
import secrets
from pathlib import Path

from aiohttp import web

from desktop.config import write_private_file
from desktop.server.errors import Handler, error_response

COOKIE_NAME = "desk_token"
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


def request_auth(request: web.Request, token: str) -> str | None:
    """How the request proved the token: "bearer", "cookie", or None."""
    header = request.headers.get("Authorization", "")
    if header[:7].lower() == "bearer " and token_matches(token, header[7:].strip()):
        return "bearer"
    if token_matches(token, request.cookies.get(COOKIE_NAME)):
        return "cookie"
    return None


def make_auth_middleware(token: str) -> web.middleware:  # type: ignore[valid-type]
    @web.middleware
    async def auth_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        if not request.path.startswith("/api/"):
            return await handler(request)
        if not same_origin_or_none(request):
            # A page of another origin may open a WebSocket to us (browsers allow it): only
            # this origin's page, or a client that sends no Origin, may connect a terminal.
            return error_response(403, "auth.forbidden", "Cross-origin WebSocket refused.")
        how = request_auth(request, token)
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


def login_redirect(request: web.Request, token: str) -> web.Response:
    """`GET /?token=T`: trade the token for a cookie and drop it from the address bar."""
    response = web.Response(status=303, headers={"Location": "/", "Cache-Control": "no-store"})
    if token_matches(token, request.query.get("token")):
        response.set_cookie(
            COOKIE_NAME, token, httponly=True, samesite="Strict", path="/", max_age=10 * 365 * 86400
        )
    return response
