"""Serves the built web UI (web/dist) from an in-memory index of the build, as API.md's
"Web UI serving" says.
"""

from __future__ import annotations

import asyncio
import hashlib
import mimetypes
import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from aiohttp import web

from desktop.server.auth import BrowserSessions, login_redirect

IMMUTABLE = "public, max-age=31536000, immutable"
# Scripts only from the build, and every script sink behind Trusted Types: `dompurify` (the
# sanitiser's own policy, the only way markup reaches innerHTML) and `desk-sw` (exactly
# `/sw.js`). `connect-src 'self'` covers same-origin ws:/wss: (CSP3, Chromium and
# QtWebEngine). Styles keep 'unsafe-inline': xterm.js's DOM renderer writes <style> elements.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; "
    "worker-src 'self'; manifest-src 'self'; base-uri 'none'; frame-ancestors 'none'; "
    "form-action 'self'; require-trusted-types-for 'script'; trusted-types dompurify desk-sw"
)
# Preferred first: brotli is smaller than gzip for the same file.
_ENCODINGS = (("br", ".br"), ("gzip", ".gz"))
_COMPRESSED_SUFFIXES = frozenset(suffix for _, suffix in _ENCODINGS)
_CONTENT_TYPES = {
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".css": "text/css",
    ".html": "text/html",
    ".json": "application/json",
    ".webmanifest": "application/manifest+json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".woff2": "font/woff2",
    ".woff": "font/woff",
    ".ttf": "font/ttf",
    ".wasm": "application/wasm",
    ".map": "application/json",
    ".txt": "text/plain",
}
_TEXT_TYPES = ("text/", "application/json", "application/manifest+json", "image/svg+xml")
# Tells the page that the service runs with test hooks on (DESK_TEST_HOOKS=1): only then does it
# load its test hooks (web/src/test-hooks.js, window.__desk).
TEST_HOOKS_META = b'<meta name="desk-test-hooks" content="on" />'


def content_type(name: str) -> str:
    suffix = os.path.splitext(name)[1].lower()
    kind = _CONTENT_TYPES.get(suffix) or mimetypes.guess_type(name)[0] or "application/octet-stream"
    return f"{kind}; charset=utf-8" if kind.startswith(_TEXT_TYPES) else kind


@dataclass(frozen=True)
class BuiltFile:
    body: bytes
    content_type: str
    etag: str
    encoded: dict[str, bytes] = field(default_factory=dict)  # "br"/"gzip" -> body


def load_file(path: Path, name: str) -> BuiltFile:
    body = path.read_bytes()
    encoded = {}
    for encoding, suffix in _ENCODINGS:
        sibling = path.with_name(path.name + suffix)
        if sibling.is_file():
            encoded[encoding] = sibling.read_bytes()
    etag = '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'
    return BuiltFile(body, content_type(name), etag, encoded)


def load_build(dist: Path) -> dict[str, BuiltFile]:
    """Relative POSIX path -> file, for every servable file of the build."""
    files: dict[str, BuiltFile] = {}
    if not dist.is_dir():
        return files
    for path in dist.rglob("*"):
        # Precompressed siblings are alternative bodies of their file, not URLs of their own.
        if not path.is_file() or (
            path.suffix in _COMPRESSED_SUFFIXES and path.with_suffix("").is_file()
        ):
            continue
        name = path.relative_to(dist).as_posix()
        files[name] = load_file(path, name)
    return files


def with_test_hooks(index: BuiltFile) -> BuiltFile:
    """index.html marked for a service with test hooks on (served uncompressed)."""
    head = index.body.find(b"<head>")
    if head < 0:
        return index
    at = head + len(b"<head>")
    body = index.body[:at] + TEST_HOOKS_META + index.body[at:]
    etag = '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'
    return BuiltFile(body, index.content_type, etag)


def accepted_encodings(request: web.Request) -> set[str]:
    accepted = set()
    for item in request.headers.get("Accept-Encoding", "").split(","):
        token, _, params = item.strip().partition(";")
        if params.replace(" ", "") in ("q=0", "q=0.0", "q=0.00", "q=0.000"):
            continue
        accepted.add(token.strip().lower())
    return accepted


class WebUI:
    def __init__(
        self, dist: Path, token: str, sessions: BrowserSessions, *, test_hooks: bool = False
    ) -> None:
        self.dist = dist
        self.token = token
        self.sessions = sessions
        self.test_hooks = test_hooks
        self.files: dict[str, BuiltFile] = {}

    async def load(self) -> None:
        files = await asyncio.to_thread(load_build, self.dist)
        if self.test_hooks and "index.html" in files:
            files["index.html"] = with_test_hooks(files["index.html"])
        self.files = files

    async def handle(self, request: web.Request) -> web.StreamResponse:
        raw = unquote(request.raw_path.split("?", 1)[0])
        if ".." in raw.split("/") or "\\" in raw or "\x00" in raw:
            return _not_found()
        key = raw.lstrip("/")
        if key in ("", "index.html") and "token" in request.query:
            return await login_redirect(request, self.token, self.sessions)
        if key.startswith("_assets/"):
            built = self.files.get(key) or await self._load_new_asset(key)
            if built is None:
                return _not_found()
            return _respond(request, built, IMMUTABLE)
        built = self.files.get(key)
        if key == "sw.js":
            return _not_found() if built is None else _respond(request, built, "no-cache")
        if built is not None and key != "index.html" and "/" not in key:
            # Root files of the build: manifest, icons (public, revalidated).
            return _respond(request, built, "no-cache")
        return self._index(request)

    async def _load_new_asset(self, key: str) -> BuiltFile | None:
        """An asset of a build made after start-up (`make run` beside a running service)."""

        def look() -> BuiltFile | None:
            candidate = (self.dist / key).resolve()
            if candidate.is_relative_to(self.dist.resolve()) and candidate.is_file():
                return load_file(candidate, key)
            return None

        built = await asyncio.to_thread(look)
        if built is not None:
            self.files[key] = built
        return built

    def _index(self, request: web.Request) -> web.StreamResponse:
        built = self.files.get("index.html")
        if built is None:
            return web.Response(
                status=503,
                text="The web UI is not built: run `make run` (it builds web/dist).",
                headers={"Cache-Control": "no-store"},
            )
        response = _respond(request, built, "no-cache")
        response.headers["Content-Security-Policy"] = CSP
        response.headers["Referrer-Policy"] = "no-referrer"
        return response


def _respond(request: web.Request, built: BuiltFile, cache_control: str) -> web.Response:
    headers = {
        "Cache-Control": cache_control,
        "Content-Type": built.content_type,
        "ETag": built.etag,
        "X-Content-Type-Options": "nosniff",
    }
    if built.encoded:
        headers["Vary"] = "Accept-Encoding"
    if built.etag in request.headers.get("If-None-Match", ""):
        return web.Response(status=304, headers=headers)
    body = built.body
    accepted = accepted_encodings(request) if built.encoded else set()
    for encoding, _ in _ENCODINGS:
        if encoding in accepted and encoding in built.encoded:
            body = built.encoded[encoding]
            headers["Content-Encoding"] = encoding
            break
    return web.Response(body=body, headers=headers)


def _not_found() -> web.Response:
    return web.Response(status=404, body=b"", headers={"Cache-Control": "no-store"})
