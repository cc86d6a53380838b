"""The aiohttp application of the Desk service: middlewares, routes, lifecycle."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from aiohttp import web

from desktop.agent.engine import EngineParts, build_engine
from desktop.agent.runner import ProfileSource
from desktop.config import Settings, web_dist_dir
from desktop.events.bus import DurableBus
from desktop.events.fanout import Fanout
from desktop.provider.profiles import Profile
from desktop.provider.settings import ProviderConfigStore
from desktop.server.appkeys import ENGINE, EVENTS, INFLIGHT, SETTINGS, STORE, TOKEN
from desktop.server.auth import BrowserSessions, make_auth_middleware, setup_auth_routes
from desktop.server.errors import error_middleware
from desktop.server.hosts import HostPolicy, make_host_middleware
from desktop.server.inflight import InFlight
from desktop.server.provider_routes import setup_provider_routes
from desktop.server.routes_background import setup_background_routes
from desktop.server.routes_checkpoints import setup_checkpoint_routes
from desktop.server.routes_core import api_not_found, setup_core_routes
from desktop.server.routes_events import setup_event_routes
from desktop.server.routes_instructions import setup_instruction_routes
from desktop.server.routes_permissions import setup_permission_routes
from desktop.server.routes_sessions import setup_session_routes
from desktop.server.routes_test import enabled as test_hooks_enabled
from desktop.server.routes_test import setup_test_routes
from desktop.server.terminals import TERMINALS, setup_terminals
from desktop.server.webui import WebUI
from desktop.store.db import Store

MAX_BODY_BYTES = 4 * 1024 * 1024


def create_app(
    settings: Settings, *, token: str, profile: ProfileSource | None = None
) -> web.Application:
    """The service; `profile` replaces the provider settings' profile (tests' fake ones)."""
    settings.ensure_dirs()
    sessions = BrowserSessions(settings.browser_sessions_path)
    inflight = InFlight()
    app = web.Application(
        middlewares=[
            make_host_middleware(HostPolicy(settings.allowed_hosts)),
            inflight.middleware,
            error_middleware,
            make_auth_middleware(token, sessions),
        ],
        client_max_size=MAX_BODY_BYTES,
    )
    app[INFLIGHT] = inflight
    app[SETTINGS] = settings
    app[TOKEN] = token
    app[EVENTS] = Fanout()
    app[STORE] = Store(settings.database_path)
    setup_terminals(app)  # the PTY host link: the engine runs shell calls as its jobs
    terminals = app[TERMINALS]
    config = ProviderConfigStore(settings)

    async def configured() -> Profile | None:
        return await asyncio.to_thread(config.profile)

    bus = DurableBus(app[STORE], app[EVENTS])
    source = profile or configured
    parts = EngineParts(bus, settings, source, terminals.client, terminals.running_client)
    engine = app[ENGINE] = build_engine(parts)
    ui = WebUI(web_dist_dir(), token, sessions, test_hooks=test_hooks_enabled())

    async def lifecycle(app: web.Application) -> AsyncIterator[None]:
        await app[STORE].open()
        await ui.load()
        bus.start()
        await engine.start()  # before any route serves: restart recovery
        yield
        await bus.stop()
        await app[STORE].close()

    async def end_streams(app: web.Application) -> None:
        app[EVENTS].close()

    app.cleanup_ctx.append(lifecycle)

    async def stop_engine(app: web.Application) -> None:
        await engine.close()

    app.on_shutdown.append(stop_engine)
    app.on_shutdown.append(end_streams)
    setup_auth_routes(app, sessions)
    setup_core_routes(app)
    setup_event_routes(app)
    setup_session_routes(app)
    setup_instruction_routes(app)
    setup_permission_routes(app)
    setup_background_routes(app)
    setup_checkpoint_routes(app)
    setup_test_routes(app)
    setup_provider_routes(app)
    # Registered last so every real route wins; /api/ never falls through to the UI.
    app.router.add_route("*", "/api/{tail:.*}", api_not_found)
    app.router.add_get("/{tail:.*}", ui.handle)  # HEAD too
    return app
