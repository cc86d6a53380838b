"""Checkpoint routes: a session's changes, revert, unrevert and fork. Thin like the other
session routes: the body is checked here, the session's state by the `SessionService`, and
the work is `Checkpoints`'.
"""

from __future__ import annotations

from aiohttp import web

from desktop.events import errors
from desktop.events.schema import ID
from desktop.server.appkeys import ENGINE
from desktop.server.errors import ApiError, data_response, read_json_object


def _invalid(message: str) -> ApiError:
    return ApiError(400, "request.invalid", message)


def _session_id(request: web.Request) -> str:
    value = request.match_info["id"]
    if not ID.match(value):
        raise ApiError(404, "session.not_found", f"No session {value!r}.")
    return value


def _message_id(value: object, session_id: str, *, required: bool) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise _invalid("message_id must be a message id (a string).")
    if not ID.match(value):
        raise errors.message_not_found(session_id, value)
    return value


def _only(body: dict[str, object], *names: str) -> None:
    unknown = set(body) - set(names)
    if unknown:
        raise _invalid(f"Unknown field(s): {', '.join(sorted(unknown))}.")


def _flag(body: dict[str, object], name: str) -> bool:
    value = body.get(name, False)
    if not isinstance(value, bool):
        raise _invalid(f"{name} must be true or false.")
    return value


async def _idle(request: web.Request, session_id: str) -> None:
    """404 for an unknown session, 409 `session.busy` while a turn runs."""
    session = await request.app[ENGINE].sessions.get(session_id)
    if session["status"] == "busy":
        raise errors.busy(session_id)


async def changes(request: web.Request) -> web.Response:
    session_id = _session_id(request)
    _only(dict(request.query), "message_id")
    message_id = _message_id(request.query.get("message_id"), session_id, required=False)
    await request.app[ENGINE].sessions.get(session_id)
    files = await request.app[ENGINE].checkpoints.changes(session_id, message_id)
    return data_response({"files": files})


async def revert(request: web.Request) -> web.Response:
    """`preview: true` answers what the revert would restore and leave, changing nothing."""
    session_id = _session_id(request)
    body = await read_json_object(request)
    _only(body, "message_id", "force", "preview")
    if "message_id" not in body:
        raise _invalid("message_id is required.")
    message_id = _message_id(body["message_id"], session_id, required=True)
    force, preview = _flag(body, "force"), _flag(body, "preview")
    assert message_id is not None
    await _idle(request, session_id)
    result = await request.app[ENGINE].checkpoints.revert(
        session_id, message_id, force=force, preview=preview
    )
    return data_response(result)


async def unrevert(request: web.Request) -> web.Response:
    session_id = _session_id(request)
    body = await read_json_object(request)
    _only(body)
    await _idle(request, session_id)
    return data_response(await request.app[ENGINE].checkpoints.unrevert(session_id))


async def fork(request: web.Request) -> web.Response:
    session_id = _session_id(request)
    body = await read_json_object(request)
    _only(body, "message_id")
    message_id = _message_id(body.get("message_id"), session_id, required=False)
    await _idle(request, session_id)
    new = await request.app[ENGINE].checkpoints.fork(session_id, message_id)
    return data_response(await request.app[ENGINE].sessions.get(new), status=201)


async def _recover(app: web.Application) -> None:
    await app[ENGINE].checkpoints.recover()


def setup_checkpoint_routes(app: web.Application) -> None:
    """The routes, and the start-up step that finishes a half-done revert (it runs after
    the store and the bus are up, before any request is served)."""
    app.on_startup.append(_recover)
    r = app.router
    r.add_get("/api/session/{id}/changes", changes)
    r.add_post("/api/session/{id}/revert", revert)
    r.add_post("/api/session/{id}/unrevert", unrevert)
    r.add_post("/api/session/{id}/fork", fork)
