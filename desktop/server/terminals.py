"""Terminal routes of the service: REST, connect tickets and the WebSocket relay.

The service owns no terminal: every request goes to the PTY host (desktop.ptyhost), which
is started on first use and outlives the service. The WebSocket handler relays frames both
ways without buffering of its own: it reads the next frame from the host only after the
previous one was written to the client, and client acks go to the host, so flow control is
end to end.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable

from aiohttp import WSMsgType, web

from desktop.config import Settings
from desktop.ptyhost.client import PtyAttachment, PtyHostClient, TextMessage
from desktop.ptyhost.launcher import ensure_host
from desktop.ptyhost.protocol import OutputFrame, PtyHostError, dumps
from desktop.ptyhost.validation import parse_attach_query, parse_client_text
from desktop.server.appkeys import EVENTS, SETTINGS
from desktop.server.auth import AUTH_METHOD, own_origin
from desktop.server.errors import ApiError, data_response, read_json_object
from desktop.server.events import EventBus
from desktop.server.tickets import TicketStore

log = logging.getLogger("desk.server.terminals")

MAX_INPUT_MESSAGE = 1024 * 1024
# Output frames already waiting are joined into one WebSocket message up to this size.
COALESCE_BYTES = 1024 * 1024
_EVENT_TYPES = {
    "created": "pty.created",
    "updated": "pty.updated",
    "exited": "pty.exited",
    "deleted": "pty.deleted",
}


class TerminalService:
    """The service's link to the PTY host, started lazily and re-established when lost."""

    def __init__(self, settings: Settings, events: EventBus) -> None:
        self.settings = settings
        self.events = events
        self._client: PtyHostClient | None = None
        self._lock = asyncio.Lock()
        self._pump: asyncio.Task[None] | None = None
        self.sockets: weakref.WeakSet[web.WebSocketResponse] = weakref.WeakSet()

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

    async def close_sockets(self) -> None:
        for socket in list(self.sockets):
            await socket.close(code=1001, message=b"service stopping")

    async def close(self) -> None:
        await self.close_sockets()
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
    socket = web.WebSocketResponse(compress=False, max_msg_size=MAX_INPUT_MESSAGE)
    if not socket.can_prepare(request).ok:
        raise ApiError(400, "request.websocket_required", "This route needs a WebSocket upgrade.")
    # Refusals (unknown id, bad cursor) are answered before the upgrade.
    attachment = await (await _host(request)).attach(
        terminal_id,
        cursor=params.cursor,
        attachment_id=params.attachment_id,
        role=params.role,
        takeover=params.takeover,
        epoch=params.epoch,
    )
    try:
        await socket.prepare(request)
        service = request.app[TERMINALS]
        service.sockets.add(socket)
        await socket.send_str(attachment.attached_text)
        await _relay(socket, attachment)
    finally:
        attachment.close()
    return socket


async def _relay(socket: web.WebSocketResponse, attachment: PtyAttachment) -> None:
    outbound = asyncio.ensure_future(_host_to_client(socket, attachment))
    try:
        await _client_to_host(socket, attachment)
    finally:
        outbound.cancel()
        with contextlib.suppress(asyncio.CancelledError, ConnectionError):
            await outbound
        if not socket.closed:
            await socket.close()


async def _host_to_client(socket: web.WebSocketResponse, attachment: PtyAttachment) -> None:
    try:
        while True:
            message = await attachment.recv()
            if message is None:
                break
            if isinstance(message, TextMessage):
                await socket.send_str(message.text)
                continue
            pending = await _send_output(socket, attachment, message)
            if pending is not None:
                await socket.send_str(pending.text)
    except (ConnectionError, PtyHostError) as exc:
        log.debug("relay to the client ended: %s", exc)
    await socket.close()


async def _send_output(
    socket: web.WebSocketResponse, attachment: PtyAttachment, first: OutputFrame
) -> TextMessage | None:
    """Send `first` joined with output frames already waiting; returns a text frame met."""
    chunks = [first.data]
    size = len(first.data)
    pending: TextMessage | None = None
    while size < COALESCE_BYTES:
        ready = attachment.next_ready()
        if ready is None:
            break
        if isinstance(ready, TextMessage):
            pending = ready
            break
        chunks.append(ready.data)
        size += len(ready.data)
    await socket.send_bytes(chunks[0] if len(chunks) == 1 else b"".join(chunks))
    return pending


async def _client_to_host(socket: web.WebSocketResponse, attachment: PtyAttachment) -> None:
    # Ends when the client closes, or when the host side ends and closes the socket.
    async for message in socket:
        try:
            if message.type == WSMsgType.BINARY:
                await attachment.send_input(message.data)
            elif message.type == WSMsgType.TEXT:
                try:
                    parsed = parse_client_text(message.data)
                except PtyHostError as exc:
                    await socket.send_str(dumps(exc.frame()))
                else:
                    await attachment.send_message(parsed.to_json())
        except PtyHostError:
            break


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

    async def close_sockets(app: web.Application) -> None:
        await service.close_sockets()

    app.cleanup_ctx.append(lifecycle)
    app.on_shutdown.append(close_sockets)
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
