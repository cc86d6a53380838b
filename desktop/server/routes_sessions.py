"""Session routes: sessions, their messages and log, prompts (`/api/session...`).

Thin: each handler checks the request's shape (every bad field is a 400 naming it) and
calls the `SessionService`, whose errors map one-to-one to the API's error types.
"""

from __future__ import annotations

import asyncio
import os
import re

from aiohttp import web

from desktop.agent.permissions import MODES, REPLIES
from desktop.agent.service import DEFAULT_PAGE, MAX_LOG_PAGE, MAX_PAGE, SessionService
from desktop.agent.session_model import EFFORTS
from desktop.events.schema import ID, MAX_DIRECTORY, MAX_TEXT, MAX_TITLE
from desktop.provider.settings import MAX_MODEL, MAX_WINDOW
from desktop.server.appkeys import ENGINE
from desktop.server.errors import ApiError, data_response, read_json_object

_NUMBER = re.compile(r"^[0-9]{1,15}$")


def _invalid(message: str) -> ApiError:
    return ApiError(400, "request.invalid", message)


def _service(request: web.Request) -> SessionService:
    return request.app[ENGINE].sessions


def _id(request: web.Request, name: str) -> str:
    value = request.match_info[name]
    if not ID.match(value):
        # Not a syntax error from the caller's view: no such thing exists.
        if name == "id":
            raise ApiError(404, "session.not_found", f"No session {value!r}.")
        raise ApiError(404, "session.message_not_found", f"No message {value!r}.")
    return value


def _query_int(
    request: web.Request, name: str, default: int | None, low: int, high: int
) -> int | None:
    raw = request.query.get(name)
    if raw is None or raw == "":
        return default
    if not _NUMBER.match(raw) or not low <= int(raw) <= high:
        raise _invalid(f"{name} must be an integer from {low} to {high}.")
    return int(raw)


def _optional_str(body: dict[str, object], name: str, limit: int) -> str | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > limit:
        raise _invalid(f"{name} must be a string of at most {limit} characters.")
    return value


def _only(body: dict[str, object], *names: str) -> None:
    unknown = set(body) - set(names)
    if unknown:
        raise _invalid(f"Unknown field(s): {', '.join(sorted(unknown))}.")


def _path_text(name: str, value: str) -> str:
    """A folder as typed: a path the system can look up (no NUL character)."""
    if "\x00" in value:
        raise _invalid(f"{name} must not contain a NUL character.")
    return value


def expand_home(directory: str) -> str:
    """`~` and `~/...` name the service user's home folder; any other path is kept as given."""
    if directory == "~":
        return os.path.expanduser("~")
    if directory.startswith("~/"):
        return os.path.join(os.path.expanduser("~"), directory[2:])
    return directory


def resolve_folder(directory: str | None) -> tuple[str, bool]:
    """The folder a session given `directory` would get (its real path; blocking) and whether
    it exists."""
    folder = os.path.realpath(expand_home(directory) if directory else os.getcwd())
    return folder, os.path.isdir(folder)


def _whole_home_or_root(directory: str | None) -> str | None:
    """The folder when it is `/` or the person's home folder (blocking: it resolves paths)."""
    folder = os.path.realpath(directory if directory is not None else os.getcwd())
    home = os.path.realpath(os.path.expanduser("~"))
    return folder if folder in ("/", home) else None


async def create_session(request: web.Request) -> web.Response:
    body = await read_json_object(request)
    _only(body, "title", "parent_id", "directory", "confirm")
    title = _optional_str(body, "title", MAX_TITLE)
    directory = _optional_str(body, "directory", MAX_DIRECTORY)
    parent_id = _optional_str(body, "parent_id", 64)
    if parent_id is not None and not ID.match(parent_id):
        raise _invalid("parent_id must be a session id.")
    if directory == "":
        raise _invalid("directory must not be empty.")
    if directory is not None:
        directory = expand_home(_path_text("directory", directory))
    confirm = body.get("confirm", False)
    if not isinstance(confirm, bool):
        raise _invalid("confirm must be true or false.")
    whole = await asyncio.to_thread(_whole_home_or_root, directory)
    if whole is not None and not confirm:
        # Every tool of the session can reach the whole folder: the person says so first.
        raise ApiError(
            409,
            "session.confirm_folder",
            f"{whole} is {'the whole file system' if whole == '/' else 'your home folder'}: "
            "the agent could read and change everything in it. Confirm to use it anyway.",
        )
    session = await _service(request).create(title=title, directory=directory, parent_id=parent_id)
    return data_response(session, status=201)


async def folder(request: web.Request) -> web.Response:
    """The service's own folder (a session's default) and, given `path`, where it leads."""
    path = _path_text("path", request.query.get("path", ""))
    if len(path) > MAX_DIRECTORY:
        raise _invalid(f"path must be at most {MAX_DIRECTORY} characters.")
    default, _ = await asyncio.to_thread(resolve_folder, None)
    answer: dict[str, object] = {"default": default}
    if path:
        answer["path"], answer["exists"] = await asyncio.to_thread(resolve_folder, path)
    return data_response(answer)


async def list_sessions(request: web.Request) -> web.Response:
    return data_response(await _service(request).list_sessions())


async def get_session(request: web.Request) -> web.Response:
    return data_response(await _service(request).get(_id(request, "id")))


def _model_settings(body: dict[str, object]) -> dict[str, object]:
    """The session's own `model` / `reasoning_effort` from a PATCH body (null: back to the
    provider settings'), checked before anything is written."""
    chosen: dict[str, object] = {}
    if "model" in body:
        model = body["model"]
        if model is not None and (
            not isinstance(model, str)
            or not model.strip()
            or len(model) > MAX_MODEL
            or any(ord(c) < 32 or ord(c) == 127 for c in model)
        ):
            raise _invalid(f"model must be a model id of at most {MAX_MODEL} characters, or null.")
        chosen["model"] = model.strip() if isinstance(model, str) else None
    if "reasoning_effort" in body:
        effort = body["reasoning_effort"]
        if effort is not None and effort not in EFFORTS:
            raise _invalid("reasoning_effort must be 'low', 'medium', 'high' or null.")
        chosen["reasoning_effort"] = effort
    return chosen


async def patch_session(request: web.Request) -> web.Response:
    session_id = _id(request, "id")
    body = await read_json_object(request)
    _only(body, "title", "permission_mode", "context_window", "model", "reasoning_effort")
    if not body:
        raise _invalid(
            "Give title, permission_mode, model, reasoning_effort and/or context_window."
        )
    chosen = _model_settings(body)
    title = body.get("title")
    if "title" in body and (
        not isinstance(title, str) or not title.strip() or len(title) > MAX_TITLE
    ):
        raise _invalid(f"title must be a non-empty string of at most {MAX_TITLE} characters.")
    mode = body.get("permission_mode")
    if "permission_mode" in body and mode not in MODES:
        raise _invalid("permission_mode must be 'auto' or 'ask'.")
    window = body.get("context_window")
    if window is not None and (
        isinstance(window, bool) or not isinstance(window, int) or not 0 < window <= MAX_WINDOW
    ):
        raise _invalid(f"context_window must be a whole number of tokens, 1 to {MAX_WINDOW}.")
    service = _service(request)
    await service.get(session_id)
    if chosen:
        await service.set_model(session_id, chosen)
    if "context_window" in body:
        await service.set_window(session_id, window)
    if isinstance(mode, str):
        await request.app[ENGINE].permissions.set_mode(session_id, mode)
    if isinstance(title, str):
        return data_response(await service.rename(session_id, title))
    return data_response(await service.get(session_id))


async def compact(request: web.Request) -> web.Response:
    """Compacts the session's history now (what the model sees; the messages stay)."""
    return data_response(await _service(request).compact(_id(request, "id")))


async def interrupt(request: web.Request) -> web.Response:
    """Ends the session's running turn for good (running tools end cancelled)."""
    session_id = _id(request, "id")
    await _service(request).get(session_id)
    interrupted = await request.app[ENGINE].runner.interrupt(session_id)
    return data_response({"interrupted": interrupted})


async def list_permissions(request: web.Request) -> web.Response:
    session_id = _id(request, "id")
    await _service(request).get(session_id)
    return data_response(await request.app[ENGINE].permissions.pending(session_id))


async def reply_permission(request: web.Request) -> web.Response:
    session_id = _id(request, "id")
    call_id = request.match_info["call_id"]
    body = await read_json_object(request)
    _only(body, "reply")
    reply = body.get("reply")
    if reply not in REPLIES:
        raise _invalid("reply must be 'once', 'session' or 'deny'.")
    await _service(request).get(session_id)
    if len(call_id) > 200:
        raise ApiError(404, "session.permission_not_found", "No such permission request.")
    assert isinstance(reply, str)
    return data_response(await request.app[ENGINE].permissions.reply(session_id, call_id, reply))


async def delete_session(request: web.Request) -> web.Response:
    await _service(request).delete(_id(request, "id"))
    return web.Response(status=204)


async def list_messages(request: web.Request) -> web.Response:
    session_id = _id(request, "id")
    limit = _query_int(request, "limit", DEFAULT_PAGE, 1, MAX_PAGE)
    before = _query_int(request, "before", None, 0, 10**15)
    after = _query_int(request, "after", None, 0, 10**15)
    if before is not None and after is not None:
        raise _invalid("Give before or after, not both.")
    assert limit is not None
    page = await _service(request).messages(session_id, limit=limit, before=before, after=after)
    return web.json_response(
        {
            "data": page.messages,
            "cursor": {"previous": page.previous, "next": page.next},
            "seq": page.seq,
        }
    )


async def get_message(request: web.Request) -> web.Response:
    found, seq = await _service(request).message_at(_id(request, "id"), _id(request, "mid"))
    return web.json_response({"data": found, "seq": seq})


async def patch_message(request: web.Request) -> web.Response:
    session_id, message_id = _id(request, "id"), _id(request, "mid")
    body = await read_json_object(request)
    _only(body, "content")
    if "content" not in body:
        raise _invalid('The body must be {"content": [...]}.')
    service = _service(request)
    updated, seq = await service.update_message(session_id, message_id, body["content"])
    return web.json_response({"data": updated, "seq": seq})


async def session_log(request: web.Request) -> web.Response:
    session_id = _id(request, "id")
    after = _query_int(request, "after", 0, 0, 10**15)
    limit = _query_int(request, "limit", MAX_LOG_PAGE, 1, MAX_LOG_PAGE)
    assert after is not None
    assert limit is not None
    events = await _service(request).log(session_id, after=after, limit=limit)
    return data_response([e.to_json() for e in events])


async def prompt(request: web.Request) -> web.Response:
    session_id = _id(request, "id")
    body = await read_json_object(request)
    _only(body, "text", "mode")
    text = body.get("text")
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_TEXT:
        raise _invalid(f"text must be a non-empty string of at most {MAX_TEXT} characters.")
    mode = body.get("mode", "queue")
    if mode not in ("queue", "steer"):
        raise _invalid("mode must be 'queue' or 'steer'.")
    assert isinstance(mode, str)
    message_id = await _service(request).prompt(session_id, text, mode)
    return data_response({"message_id": message_id}, status=202)


async def cancel_prompt(request: web.Request) -> web.Response:
    """Withdraws a queued (or steered) prompt before the model gets it: 204, or 409
    `session.prompt_delivered` when it already reached the model."""
    session_id, message_id = _id(request, "id"), _id(request, "mid")
    await _service(request).cancel_prompt(session_id, message_id)
    return web.Response(status=204)


def setup_session_routes(app: web.Application) -> None:
    r = app.router
    r.add_post("/api/session", create_session)
    r.add_get("/api/folder", folder)
    r.add_get("/api/session", list_sessions)
    r.add_get("/api/session/{id}", get_session)
    r.add_patch("/api/session/{id}", patch_session)
    r.add_delete("/api/session/{id}", delete_session)
    r.add_get("/api/session/{id}/message", list_messages)
    r.add_get("/api/session/{id}/message/{mid}", get_message)
    r.add_patch("/api/session/{id}/message/{mid}", patch_message)
    r.add_get("/api/session/{id}/log", session_log)
    r.add_post("/api/session/{id}/prompt", prompt)
    r.add_delete("/api/session/{id}/prompt/{mid}", cancel_prompt)
    r.add_post("/api/session/{id}/interrupt", interrupt)
    r.add_post("/api/session/{id}/compact", compact)
    r.add_get("/api/session/{id}/permission", list_permissions)
    r.add_post("/api/session/{id}/permission/{call_id}", reply_permission)
