"""`GET/PUT /api/config/permissions`: the person's permission rules (allow / ask / deny by
tool and pattern) and the built-in ones, kept in the data dir (desktop/agent/rules.py)."""

from __future__ import annotations

import asyncio

from aiohttp import web

from desktop.agent.rules import RulesInvalid, parse_rules
from desktop.server.appkeys import ENGINE, EVENTS
from desktop.server.errors import ApiError, data_response, read_json_object


async def get_permissions(request: web.Request) -> web.Response:
    book = request.app[ENGINE].permissions.rules
    return data_response(await asyncio.to_thread(book.public))


async def put_permissions(request: web.Request) -> web.Response:
    body = await read_json_object(request)
    unknown = sorted(set(body) - {"rules"})
    if unknown:
        raise ApiError(400, "request.invalid", f"Unknown field(s): {', '.join(unknown)}.")
    if "rules" not in body:
        raise ApiError(400, "request.invalid", 'The body must be {"rules": [...]}.')
    try:
        rules = parse_rules(body["rules"])
    except RulesInvalid as exc:
        raise ApiError(400, "request.invalid", str(exc)) from exc
    book = request.app[ENGINE].permissions.rules
    await asyncio.to_thread(book.save, rules)
    public = await asyncio.to_thread(book.public)
    request.app[EVENTS].publish("permission.rules.updated", {"rules": public["rules"]})
    return data_response(public)


def setup_permission_routes(app: web.Application) -> None:
    app.router.add_get("/api/config/permissions", get_permissions)
    app.router.add_put("/api/config/permissions", put_permissions)
