"""`GET /api/session/{id}/instructions`: the instruction files in effect for a session, in
the order the system prompt carries them."""

from __future__ import annotations

import asyncio

from aiohttp import web

from desktop.agent import instructions
from desktop.events.schema import ID
from desktop.server.appkeys import ENGINE
from desktop.server.errors import ApiError, data_response


async def session_instructions(request: web.Request) -> web.Response:
    session_id = request.match_info["id"]
    if not ID.match(session_id):
        raise ApiError(404, "session.not_found", f"No session {session_id!r}.")
    session = await request.app[ENGINE].sessions.get(session_id)
    files = await asyncio.to_thread(instructions.load, str(session["directory"]))
    return data_response({"files": [f.json() for f in files]})


def setup_instruction_routes(app: web.Application) -> None:
    app.router.add_get("/api/session/{id}/instructions", session_instructions)
