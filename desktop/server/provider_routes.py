"""`GET/PUT /api/config/provider`: the provider settings, with the key write-only; and
`GET /api/config/provider/models`, the provider's model list with each model's window."""

from __future__ import annotations

import asyncio

import aiohttp
from aiohttp import web

from desktop.provider.errors import ProviderError
from desktop.provider.models import list_models
from desktop.provider.settings import ConfigInvalid, ProviderConfigStore, parse_update
from desktop.server.appkeys import ENGINE, EVENTS, SETTINGS
from desktop.server.errors import ApiError, data_response, read_json_object

PROVIDER_CONFIG = web.AppKey("provider_config", ProviderConfigStore)


async def get_provider(request: web.Request) -> web.Response:
    store = request.app[PROVIDER_CONFIG]
    return data_response(await asyncio.to_thread(store.public))


async def put_provider(request: web.Request) -> web.Response:
    body = await read_json_object(request)
    try:
        update = parse_update(body)
    except ConfigInvalid as exc:
        raise ApiError(400, "request.invalid", str(exc)) from exc
    store = request.app[PROVIDER_CONFIG]
    public = await asyncio.to_thread(store.save, update)
    request.app[ENGINE].runner.settings_changed()  # a retry waiting goes now, with them
    request.app[EVENTS].publish(
        "provider.config.updated",
        {"provider": public["provider"], "configured": public["configured"]},
    )
    return data_response(public)


async def get_models(request: web.Request) -> web.Response:
    store = request.app[PROVIDER_CONFIG]
    profile = await asyncio.to_thread(store.profile)
    if profile is None:
        raise ApiError(409, "provider.not_configured", "No model provider is configured.")
    try:
        async with aiohttp.ClientSession() as http:
            models = await list_models(http, profile)
    except ProviderError as exc:
        raise ApiError(502, exc.kind, exc.message) from exc
    return data_response([m.as_json() for m in models])


def setup_provider_routes(app: web.Application) -> None:
    app[PROVIDER_CONFIG] = ProviderConfigStore(app[SETTINGS])
    app.router.add_get("/api/config/provider", get_provider)
    app.router.add_put("/api/config/provider", put_provider)
    app.router.add_get("/api/config/provider/models", get_models)
