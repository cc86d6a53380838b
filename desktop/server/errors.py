"""JSON error shape of the API and the middleware that guarantees it."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web

from desktop.events.errors import SessionError

log = logging.getLogger("desk.server")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class ApiError(Exception):
    """An error answered as `{"error": {"type", "message"}}` with `status`."""

    def __init__(self, status: int, error_type: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.type = error_type
        self.message = message


def error_response(status: int, error_type: str, message: str) -> web.Response:
    return web.json_response({"error": {"type": error_type, "message": message}}, status=status)


def data_response(payload: object, status: int = 200) -> web.Response:
    return web.json_response({"data": payload}, status=status)


async def read_json_object(request: web.Request) -> dict[str, object]:
    """The request body as a JSON object; an empty body counts as `{}`."""
    raw = await request.read()
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ApiError(
            400, "request.invalid_json", f"The request body is not valid JSON: {exc}"
        ) from exc
    if not isinstance(value, dict):
        raise ApiError(400, "request.invalid", "The request body must be a JSON object.")
    return value


_HTTP_TYPES = {
    400: "request.invalid",
    401: "auth.required",
    403: "auth.forbidden",
    404: "route.not_found",
    405: "request.method_not_allowed",
    413: "request.too_large",
}


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every /api/ failure becomes a JSON error; nothing escapes as a traceback page."""
    try:
        return await handler(request)
    except (ApiError, SessionError) as exc:
        return error_response(exc.status, exc.type, exc.message)
    except web.HTTPException as exc:
        if not request.path.startswith("/api/") or exc.status < 400:
            raise
        kind = _HTTP_TYPES.get(exc.status, "request.failed")
        message = exc.text if exc.text and not exc.text.startswith(str(exc.status)) else exc.reason
        if exc.status == 404:
            message = f"No API route {request.method} {request.path}."
        elif exc.status == 405:
            message = f"{request.method} is not allowed on {request.path}."
        return error_response(exc.status, kind, message)
    except (ConnectionResetError, OSError) as exc:
        if request.transport is None or request.transport.is_closing():
            raise
        log.exception("I/O failure while handling %s %s", request.method, request.path)
        return error_response(500, "internal", f"Internal error: {exc.__class__.__name__}")
    except Exception as exc:
        log.exception("Unhandled error while handling %s %s", request.method, request.path)
        return error_response(500, "internal", f"Internal error: {exc.__class__.__name__}")
