"""Attaching to a PTY host terminal the way the product does, without a service.

A test plays the service: it accepts a loopback TCP connection, takes the WebSocket request
off it (made by the `websockets` package's sans-I/O client), hands the socket to the host
with `hand_off` and speaks WebSocket on the other end, where the host answers with its 101."""

from __future__ import annotations

import asyncio
import collections
import json
import socket
from dataclasses import dataclass
from typing import cast

from websockets.client import ClientProtocol
from websockets.frames import Frame, Opcode
from websockets.http11 import Response
from websockets.uri import parse_uri

from desktop.process.registration import HostRegistration
from desktop.ptyhost.handoff_client import accept_key, hand_off
from desktop.ptyhost.protocol import PtyHostError, PtyHostUnavailable
from desktop.ptyhost.validation import AttachRequest


@dataclass(frozen=True, slots=True)
class Text:
    """A text message of the attachment, parsed."""

    message: dict[str, object]


Message = Text | bytes


class WebSocketClient(asyncio.Protocol):
    """The browser's end of a handed-off socket: frames parsed by `websockets`, kept in order."""

    def __init__(self, parser: ClientProtocol) -> None:
        self.parser = parser
        self.transport: asyncio.Transport | None = None
        self._messages: collections.deque[Message] = collections.deque()
        self._ended = False
        self._waiter: asyncio.Future[None] | None = None
        self.close_code: int | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self.parser.receive_data(data)
        self._process()

    def eof_received(self) -> bool | None:
        self.parser.receive_eof()
        self._process()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self._ended = True
        self._wake()

    def _process(self) -> None:
        for event in self.parser.events_received():
            if isinstance(event, Response):
                if self.parser.handshake_exc is not None:
                    self._ended = True
            elif isinstance(event, Frame):
                self._handle(event)
        self._flush()
        self._wake()

    def _handle(self, frame: Frame) -> None:
        if frame.opcode is Opcode.TEXT:
            message = json.loads(bytes(frame.data))
            assert isinstance(message, dict)
            self._messages.append(Text(message))
        elif frame.opcode is Opcode.BINARY:
            self._messages.append(bytes(frame.data))
        elif frame.opcode is Opcode.CLOSE:
            close = self.parser.close_rcvd
            self.close_code = close.code if close is not None else None
            self._ended = True

    def _flush(self) -> None:
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        for data in self.parser.data_to_send():
            if data:
                transport.write(data)
            else:
                transport.write_eof()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    # ----- for tests --------------------------------------------------------------------

    def next_ready(self) -> Message | None:
        """A message already received, without waiting."""
        return self._messages.popleft() if self._messages else None

    async def recv(self) -> Message | None:
        """The next message; None once the connection has ended and every message was read."""
        while not self._messages:
            if self._ended:
                return None
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self._messages.popleft()

    def send_binary(self, data: bytes) -> None:
        self.parser.send_binary(data)
        self._flush()

    def send_json(self, message: dict[str, object]) -> None:
        self.parser.send_text(json.dumps(message).encode())
        self._flush()

    @property
    def ended(self) -> bool:
        return self._ended

    def close(self) -> None:
        """Drop the connection at once, as a tab that goes away does."""
        self._ended = True
        if self.transport is not None:
            self.transport.close()
        self._wake()


class HandedOffAttachment:
    """One attachment over a handed-off WebSocket: `attached` first, then what follows."""

    def __init__(self, client: WebSocketClient, attached: dict[str, object]) -> None:
        self.client = client
        self.attached = attached

    async def recv(self) -> Message | None:
        return await self.client.recv()

    def next_ready(self) -> Message | None:
        return self.client.next_ready()

    async def send_input(self, data: bytes) -> None:
        self.client.send_binary(data)

    async def send_message(self, message: dict[str, object]) -> None:
        self.client.send_json(message)

    async def ack(self, count: int) -> None:
        await self.send_message({"type": "ack", "bytes": count})

    async def resize(self, cols: int, rows: int) -> None:
        await self.send_message({"type": "resize", "cols": cols, "rows": rows})

    @property
    def closed(self) -> bool:
        return self.client.ended

    def close(self) -> None:
        self.client.close()


async def loopback_pair() -> tuple[socket.socket, socket.socket]:
    """Two ends of one TCP connection on 127.0.0.1: (the browser's, the service's)."""
    loop = asyncio.get_running_loop()
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.setblocking(False)
        browser = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        browser.setblocking(False)
        try:
            accepted = asyncio.ensure_future(loop.sock_accept(listener))
            await loop.sock_connect(browser, listener.getsockname())
            served, _ = await accepted
        except BaseException:
            browser.close()
            raise
    return browser, served


async def attach_websocket(
    registration: HostRegistration, terminal_id: str, request: AttachRequest
) -> HandedOffAttachment:
    """Attach through the handoff listener; returns once `attached` arrived.

    Raises PtyHostError when the host refuses the handoff (404 unknown terminal, 400 bad
    parameters) or answers the attachment with an error frame instead of `attached`."""
    parser = ClientProtocol(parse_uri("ws://127.0.0.1/"), max_size=None)
    upgrade = parser.connect()
    parser.send_request(upgrade)
    parser.data_to_send()  # the request the service would have read and checked
    browser, served = await loopback_pair()
    try:
        accept = accept_key(upgrade.headers["Sec-WebSocket-Key"])
        await hand_off(registration, served.fileno(), terminal_id, request, accept)
    except BaseException:
        browser.close()
        raise
    finally:
        served.close()  # the host holds its own descriptor of the connection now
    loop = asyncio.get_running_loop()
    _, client = await loop.create_connection(lambda: WebSocketClient(parser), sock=browser)
    first = await client.recv()
    if isinstance(first, Text) and first.message.get("type") == "attached":
        return HandedOffAttachment(client, first.message)
    client.close()
    if isinstance(first, Text) and first.message.get("type") == "error":
        raise PtyHostError.from_json(first.message.get("error"))
    raise PtyHostUnavailable(f"The PTY host sent {first!r} instead of `attached`.")
