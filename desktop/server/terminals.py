"""Terminal routes of the service: REST, connect tickets and the WebSocket upgrade, which is
checked here and then handed to the PTY host (handoff.py), so the service is not in the byte
path and a tab stays connected while the service restarts."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

from aiohttp import web

from desktop.config import Settings
from desktop.events.fanout import Fanout
from desktop.ptyhost.client import PtyHostClient
from desktop.ptyhost.launcher import ensure_host
from desktop.ptyhost.protocol import PtyHostError, PtyHostUnavailable
from desktop.ptyhost.validation import parse_attach_query
from desktop.server.appkeys import EVENTS, SETTINGS
from desktop.server.auth import AUTH_METHOD, own_origin
from desktop.server.errors import ApiError, data_response, read_json_object
from desktop.server.handoff import hand_over
from desktop.server.tickets import TicketStore

log = logging.getLogger("desk.server.terminals")

_EVENT_TYPES = {
    "created": "pty.created",
    "updated": "pty.updated",
    "exited": "pty.exited",
    "deleted": "pty.deleted",
}


class TerminalService:
    """The service's link to the PTY host, started lazily and re-established when lost."""

    def __init__(self, settings: Settings, events: Fanout) -> None:
        self.settings = settings
        self.events = events
        self._client: PtyHostClient | None = None
        self._lock = asyncio.Lock()
        self._pump: asyncio.Task[None] | None = None

    async def client(self) -> PtyHostClient:
        """The connected client, starting the PTY host when none is running."""
        current = self._client
        if current is not None and not current.closed:
            return current
        async with self._lock:
            if self._client is None or self._client.closed:
                self._adopt(await ensure_host(self.settings))
            assert self._client is not None
            return self._client

    async def running_client(self) -> PtyHostClient:
        """The connected client, connecting to a PTY host that already runs, but never
        starting one (PtyHostUnavailable): for housekeeping such as the job cleanup."""
        current = self._client
        if current is None or current.closed:
            await self.connect_existing()
            current = self._client
        if current is None or current.closed:
            raise PtyHostUnavailable("no PTY host is running")
        return current

    async def connect_existing(self) -> None:
        """At startup: reconnect to a PTY host that survived the previous service."""
        async with self._lock:
            if self._client is None or self._client.closed:
                client = await PtyHostClient.connect(self.settings)
                if client is not None:
                    self._adopt(client)

    def _adopt(self, client: PtyHostClient) -> None:
        self._client = client
        if self._pump is not None:
            self._pump.cancel()
        self._pump = asyncio.ensure_future(self._publish_events(client))

    async def _publish_events(self, client: PtyHostClient) -> None:
        async for event in client.events():
            kind = _EVENT_TYPES.get(str(event.get("event")))
            if kind is None:
                continue
            properties = {key: value for key, value in event.items() if key != "event"}
            self.events.publish(kind, properties)

    async def close(self) -> None:
        if self._pump is not None:
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pump
        if self._client is not None:
            await self._client.close()
            self._client = None


TERMINALS = web.AppKey("terminals", TerminalService)
TICKETS = web.AppKey("terminal_tickets", TicketStore)


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def host_errors(handler: Handler) -> Handler:
    """Answer the PTY host's refusals (unknown id, bad size...) as the API's JSON errors."""

    @functools.wraps(handler)
    async def wrapped(request: web.Request) -> web.StreamResponse:
        try:
            return await handler(request)
        except PtyHostError as exc:
            raise ApiError(exc.status, exc.type, exc.message) from None

    return wrapped


async def _host(request: web.Request) -> PtyHostClient:
    return await request.app[TERMINALS].client()


# ----- REST ---------------------------------------------------------------------------


@host_errors
async def list_terminals(request: web.Request) -> web.StreamResponse:
    group = request.query.get("group")
    return data_response(await (await _host(request)).list(group))


@host_errors
async def create_terminal(request: web.Request) -> web.StreamResponse:
    body = await read_json_object(request)
    return data_response(await (await _host(request)).create(body), status=201)


@host_errors
async def get_terminal(request: web.Request) -> web.StreamResponse:
    return data_response(await (await _host(request)).get(request.match_info["id"]))


@host_errors
async def update_terminal(request: web.Request) -> web.StreamResponse:
    body = await read_json_object(request)
    return data_response(await (await _host(request)).update(request.match_info["id"], body))


@host_errors
async def delete_terminal(request: web.Request) -> web.StreamResponse:
    await (await _host(request)).delete(request.match_info["id"])
    return web.Response(status=204)


@host_errors
async def terminal_snapshot(request: web.Request) -> web.StreamResponse:
    return data_response(await (await _host(request)).snapshot(request.match_info["id"]))


@host_errors
async def connect_token(request: web.Request) -> web.StreamResponse:
    if request.headers.get("X-Desk-Ticket") != "1":
        raise ApiError(403, "ticket.header_required", "Send the header `X-Desk-Ticket: 1`.")
    origin = request.headers.get("Origin")
    if origin is not None and origin != own_origin(request):
        raise ApiError(403, "ticket.origin_mismatch", "Tickets are only issued to this origin.")
    terminal_id = request.match_info["id"]
    await (await _host(request)).get(terminal_id)  # 404 for an unknown terminal
    store = request.app[TICKETS]
    ticket = store.issue(terminal_id)
    return data_response({"ticket": ticket, "expires_in": round(store.ttl)})


# ----- WebSocket --------------------------------------------------------------------------


@host_errors
async def connect(request: web.Request) -> web.StreamResponse:
    terminal_id = request.match_info["id"]
    ticket = request.query.get("ticket")
    if ticket is not None:
        if not request.app[TICKETS].redeem(ticket, terminal_id):
            raise ApiError(
                403,
                "ticket.invalid",
                "The ticket is unknown, used, expired or for another terminal.",
            )
    elif request.get(AUTH_METHOD) != "bearer":
        raise ApiError(
            403,
            "ticket.required",
            "Connect with a ticket (POST .../connect-token) or a Bearer token.",
        )
    params = parse_attach_query(request.query)
    if not web.WebSocketResponse().can_prepare(request).ok:
        raise ApiError(400, "request.websocket_required", "This route needs a WebSocket upgrade.")
    # Refusals (unknown id, bad cursor) are answered before the upgrade; once the PTY host
    # took the socket it speaks WebSocket on it itself (desktop/server/handoff.py).
    client = await _host(request)
    return await hand_over(request, client.registration, terminal_id, params)


# ----- setup ------------------------------------------------------------------------------


def setup_terminals(app: web.Application) -> None:
    """Register the terminal routes and the PTY host link's lifecycle on the service app."""
    app[TICKETS] = TicketStore()
    service = TerminalService(app[SETTINGS], app[EVENTS])
    app[TERMINALS] = service

    async def lifecycle(app: web.Application) -> AsyncIterator[None]:
        startup = asyncio.ensure_future(_connect_quietly(service))
        yield
        startup.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await startup
        await service.close()

    app.cleanup_ctx.append(lifecycle)
    router = app.router
    router.add_get("/api/pty", list_terminals)
    router.add_post("/api/pty", create_terminal)
    router.add_get("/api/pty/{id}", get_terminal)
    router.add_patch("/api/pty/{id}", update_terminal)
    router.add_delete("/api/pty/{id}", delete_terminal)
    router.add_get("/api/pty/{id}/snapshot", terminal_snapshot)
    router.add_post("/api/pty/{id}/connect-token", connect_token)
    router.add_get("/api/pty/{id}/connect", connect)


async def _connect_quietly(service: TerminalService) -> None:
    try:
        await service.connect_existing()
    except PtyHostError as exc:
        log.info("no PTY host to reconnect to: %s", exc)
