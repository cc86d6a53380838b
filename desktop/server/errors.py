"""JSON error shape of the API and the middleware that guarantees it."""

from __future__ import annotations

import json
import logging
import math
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


# What a request body may hold: plain JSON of reasonable shape. Anything else is a 400.
MAX_BODY_DEPTH = 64
MAX_INT_DIGITS = 64


class BodyError(ValueError):
    """Why a request body is not acceptable JSON (the message names the problem)."""


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise BodyError(f"an integer has more than {MAX_INT_DIGITS} digits")
    return int(text)


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BodyError(f"the number {text[:20]} is out of range")
    return value


def _refuse_constant(name: str) -> object:
    raise BodyError(f"{name} is not a JSON value")


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _check_shape(value: object) -> None:
    """No nesting deeper than MAX_BODY_DEPTH, no lone surrogate in a string or a key
    (`"\\ud800"` is valid JSON text but no text at all: it cannot be stored or sent on)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if _has_surrogate(item):
                raise BodyError("a string holds a lone surrogate (\\ud800-\\udfff)")
        elif isinstance(item, dict | list):
            if depth > MAX_BODY_DEPTH:
                raise BodyError(f"it is nested deeper than {MAX_BODY_DEPTH} levels")
            if isinstance(item, dict):
                stack.extend((key, depth) for key in item)
                stack.extend((child, depth + 1) for child in item.values())
            else:
                stack.extend((child, depth + 1) for child in item)


def parse_json_body(raw: bytes) -> object:
    """The one parser of request bodies: strict UTF-8 JSON, no NaN/Infinity, no number out
    of range, no lone surrogate, bounded nesting; raises BodyError saying what is wrong."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BodyError(f"it is not UTF-8 (byte {exc.start})") from exc
    try:
        value = json.loads(
            text,
            parse_int=_parse_int,
            parse_float=_parse_float,
            parse_constant=_refuse_constant,
        )
    except json.JSONDecodeError as exc:
        raise BodyError(exc.msg + f" (line {exc.lineno} column {exc.colno})") from exc
    except RecursionError as exc:
        raise BodyError(f"it is nested deeper than {MAX_BODY_DEPTH} levels") from exc
    _check_shape(value)
    return value


async def read_json_object(request: web.Request) -> dict[str, object]:
    """The request body as a JSON object; an empty body counts as `{}`."""
    raw = await request.read()
    if not raw.strip():
        return {}
    try:
        value = parse_json_body(raw)
    except BodyError as exc:
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
