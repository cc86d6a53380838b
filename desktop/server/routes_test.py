"""Test-only routes, registered only when the service starts with `DESK_TEST_HOOKS=1`: events
published through the real bus (validated, all or nothing) and a session's claim.
"""

from __future__ import annotations

import os

from aiohttp import web

from desktop.events.bus import Draft, draft
from desktop.events.schema import DURABLE, EPHEMERAL, ID, validate_event
from desktop.server.appkeys import ENGINE
from desktop.server.errors import ApiError, data_response, read_json_object

ENV = "DESK_TEST_HOOKS"
MAX_EVENTS = 1000
# Creating and deleting sessions has real routes (with their own rules); not through here.
_REFUSED = {"session.created", "session.deleted"}


def enabled() -> bool:
    return os.environ.get(ENV) == "1"


def _invalid(message: str) -> ApiError:
    return ApiError(400, "request.invalid", message)


async def publish_events(request: web.Request) -> web.Response:
    """`POST /api/test/events` with `{"events": [{"session_id", "type", "data"}, ...]}` (or
    one such object): durable events are appended in one transaction, in order; ephemeral
    ones are broadcast after them. 201 with the durable events as stored."""
    body = await read_json_object(request)
    items = body.get("events", [body])
    if not isinstance(items, list) or not 1 <= len(items) <= MAX_EVENTS:
        raise _invalid(f"events must be an array of 1 to {MAX_EVENTS} events.")
    durable: list[Draft] = []
    ephemeral: list[tuple[str, str, object]] = []
    for index, item in enumerate(items):
        where = f"events[{index}]"
        if not isinstance(item, dict) or set(item) - {"session_id", "type", "data"}:
            raise _invalid(f"{where} must be {{session_id, type, data}}.")
        session_id, kind, data = item.get("session_id"), item.get("type"), item.get("data", {})
        if not isinstance(session_id, str) or not ID.match(session_id):
            raise _invalid(f"{where}.session_id must be a session id.")
        if kind in _REFUSED:
            raise _invalid(f"{where}: use the session routes for {kind}.")
        if kind in EPHEMERAL:
            validate_event(kind, data, durable=False)
            ephemeral.append((session_id, str(kind), data))
        elif kind in DURABLE:
            durable.append(draft(session_id, str(kind), data))
        else:
            raise _invalid(f"{where}.type {kind!r} is not an event type.")
    service = request.app[ENGINE].sessions
    events = await service.publish(durable) if durable else []
    for session_id, kind, data in ephemeral:
        service.bus.broadcast(session_id, kind, data)
    return data_response([e.to_json() for e in events], status=201)


async def set_claim(request: web.Request) -> web.Response:
    """`POST /api/test/session/{id}/claim` `{"claimed": bool}`: make a session busy or idle
    as a running turn would."""
    body = await read_json_object(request)
    claimed = body.get("claimed")
    if not isinstance(claimed, bool) or set(body) != {"claimed"}:
        raise _invalid('The body must be {"claimed": true|false}.')
    session = await request.app[ENGINE].sessions.set_claim(request.match_info["id"], claimed)
    return data_response(session)


def setup_test_routes(app: web.Application) -> None:
    if not enabled():
        return
    app.router.add_post("/api/test/events", publish_events)
    app.router.add_post("/api/test/session/{id}/claim", set_claim)
