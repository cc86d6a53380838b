"""Serves the built web UI (web/dist) exactly as API.md "Web UI serving" says.

Only files found in the build at start-up can be served: requests are looked up in that
index, never joined onto a filesystem path, so no traversal can reach outside the build.
"""

from __future__ import annotations

import asyncio
import mimetypes
import os
from pathlib import Path
from urllib.parse import unquote

from aiohttp import web

from desktop.server.auth import login_redirect

IMMUTABLE = "public, max-age=31536000, immutable"
CSP = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self' ws: wss:; "
    "worker-src 'self'; manifest-src 'self'; base-uri 'none'; frame-ancestors 'none'; "
    "form-action 'self'"
)
_COMPRESSED_SUFFIXES = (".br", ".gz")
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


def content_type(name: str) -> str:
    suffix = os.path.splitext(name)[1].lower()
    return _CONTENT_TYPES.get(suffix) or mimetypes.guess_type(name)[0] or "application/octet-stream"


def index_build(dist: Path) -> dict[str, Path]:
    """Relative POSIX path -> file, for every servable file of the build."""
    files: dict[str, Path] = {}
    if not dist.is_dir():
        return files
    for path in dist.rglob("*"):
        # Precompressed siblings are found by FileResponse itself; they are not URLs.
        is_sibling = path.suffix in _COMPRESSED_SUFFIXES and path.with_suffix("").is_file()
        if not path.is_file() or is_sibling:
            continue
        files[path.relative_to(dist).as_posix()] = path
    return files


class WebUI:
    def __init__(self, dist: Path, token: str) -> None:
        self.dist = dist
        self.token = token
        self.files: dict[str, Path] = {}

    async def load(self) -> None:
        self.files = await asyncio.to_thread(index_build, self.dist)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        raw = unquote(request.raw_path.split("?", 1)[0])
        if ".." in raw.split("/") or "\\" in raw or "\x00" in raw:
            return _not_found()
        key = raw.lstrip("/")
        if key in ("", "index.html") and "token" in request.query:
            return login_redirect(request, self.token)
        if key.startswith("_assets/"):
            path = self.files.get(key) or await self._find_new_asset(key)
            if path is None:
                return _not_found()
            return self._file(path, key, IMMUTABLE)
        if key == "sw.js":
            path = self.files.get(key)
            if path is None:
                return _not_found()
            return self._file(path, key, "no-cache")
        path = self.files.get(key)
        if path is not None and key != "index.html" and "/" not in key:
            # Root files of the build: manifest, icons, registerSW... (public, revalidated).
            return self._file(path, key, "no-cache")
        return self._index()

    async def _find_new_asset(self, key: str) -> Path | None:
        """An asset of a build made after start-up (`make run` beside a running service)."""

        def look() -> Path | None:
            candidate = (self.dist / key).resolve()
            if candidate.is_relative_to(self.dist.resolve()) and candidate.is_file():
                return candidate
            return None

        path = await asyncio.to_thread(look)
        if path is not None:
            self.files[key] = path
        return path

    def _index(self) -> web.StreamResponse:
        path = self.files.get("index.html")
        if path is None:
            return web.Response(
                status=503,
                text="The web UI is not built: run `make run` (it builds web/dist).",
                headers={"Cache-Control": "no-store"},
            )
        response = self._file(path, "index.html", "no-cache")
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        return response

    @staticmethod
    def _file(path: Path, name: str, cache_control: str) -> web.FileResponse:
        return web.FileResponse(
            path,
            headers={
                "Cache-Control": cache_control,
                "Content-Type": content_type(name),
                "X-Content-Type-Options": "nosniff",
            },
        )


def _not_found() -> web.Response:
    return web.Response(status=404, body=b"", headers={"Cache-Control": "no-store"})
