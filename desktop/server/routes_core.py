"""Small API routes of the service itself: health, the event stream, UI preferences."""

from __future__ import annotations

import os
import re
import time

from aiohttp import web

import desktop
from desktop.server.appkeys import EVENTS, STORE
from desktop.server.errors import ApiError, data_response, read_json_object
from desktop.server.events import connected_event, encode_event

_PREF_KEY = re.compile(r"^[A-Za-z0-9._:-]{1,200}$")
PREF_VALUE_LIMIT = 64 * 1024


async def health(request: web.Request) -> web.Response:
    return data_response(
        {
            "status": "ok",
            "pid": os.getpid(),
            "version": desktop.__version__,
            "time": int(time.time() * 1000),
        }
    )


async def event_stream(request: web.Request) -> web.StreamResponse:
    """`GET /api/event`: Server-Sent Events until the client leaves or the service stops."""
    bus = request.app[EVENTS]
    sub = bus.subscribe()
    try:
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache, no-store",
                "X-Accel-Buffering": "no",
            }
        )
        await response.prepare(request)
        kind, props = connected_event()
        try:
            await response.write(b"retry: 1000\n" + encode_event(kind, props))
            async for frame in sub.frames():
                await response.write(frame)
        except ConnectionResetError:
            pass  # the client left (aiohttp's ClientConnectionResetError): a normal end
        return response
    finally:
        bus.unsubscribe(sub)


def _pref_key(request: web.Request) -> str:
    key = request.match_info["key"]
    if not _PREF_KEY.match(key):
        raise ApiError(
            400, "request.invalid", "A preference key is 1-200 characters of A-Z a-z 0-9 . _ : -."
        )
    return key


async def get_preference(request: web.Request) -> web.Response:
    key = _pref_key(request)
    value = await request.app[STORE].get_preference(key)
    return data_response({"key": key, "value": value})


async def put_preference(request: web.Request) -> web.Response:
    key = _pref_key(request)
    declared = request.content_length or 0
    # The body is measured too: a chunked upload declares no length.
    if declared > PREF_VALUE_LIMIT or len(await request.read()) > PREF_VALUE_LIMIT:
        raise ApiError(413, "request.too_large", "A preference is at most 64 KiB of JSON.")
    body = await read_json_object(request)
    if "value" not in body:
        raise ApiError(400, "request.invalid", 'The body must be {"value": <any JSON>}.')
    await request.app[STORE].set_preference(key, body["value"])
    request.app[EVENTS].publish("ui.preference.updated", {"key": key, "value": body["value"]})
    return data_response({"key": key, "value": body["value"]})


async def api_not_found(request: web.Request) -> web.Response:
    raise ApiError(404, "route.not_found", f"No API route {request.method} {request.path}.")


def setup_core_routes(app: web.Application) -> None:
    app.router.add_get("/api/health", health)
    app.router.add_get("/api/event", event_stream)
    app.router.add_get("/api/ui/prefs/{key}", get_preference)
    app.router.add_put("/api/ui/prefs/{key}", put_preference)
