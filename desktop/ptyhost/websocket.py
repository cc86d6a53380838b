"""A browser's WebSocket, handed to the PTY host by the service, as an attachment's sink."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Callable
from typing import cast

from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.server import ServerProtocol

from desktop.ptyhost import wsframe
from desktop.ptyhost.attachment import Attachment
from desktop.ptyhost.protocol import PtyHostError, dumps
from desktop.ptyhost.validation import parse_client_text

log = logging.getLogger("desk.ptyhost")

MAX_INPUT_MESSAGE = 1024 * 1024
WRITE_HIGH_WATER = 1024 * 1024
# After our close frame, how long the client has to answer before the socket is dropped.
CLOSE_TIMEOUT = 5.0
GOING_AWAY = 1001
NORMAL = 1000
INVALID_DATA = 1007


class WebSocketSink(asyncio.Protocol):
    """One adopted WebSocket: 101 first, then an attachment's frames both ways."""

    def __init__(
        self, handshake: bytes, pending: bytes, closed: Callable[[WebSocketSink], None]
    ) -> None:
        self.transport: asyncio.Transport | None = None
        self.attachment: Attachment | None = None
        self.parser = ServerProtocol(state=State.OPEN, max_size=MAX_INPUT_MESSAGE)
        self._handshake = handshake
        self._pending = pending
        self._closed_callback = closed
        self._write_paused = False
        self._reading = False
        self._live = False
        self._fragments: list[bytes] = []
        self._fragment_opcode: Opcode | None = None
        self._close_timer: asyncio.TimerHandle | None = None
        self._lost = False

    # ----- asyncio.Protocol -------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports implement asyncio.Transport without subclassing it.
        self.transport = cast(asyncio.Transport, transport)
        raw = transport.get_extra_info("socket")
        if raw is not None:
            with contextlib.suppress(OSError):
                raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.transport.set_write_buffer_limits(high=WRITE_HIGH_WATER)
        # Nothing the client sends matters before the attachment is live.
        self.transport.pause_reading()
        self.transport.write(self._handshake)

    def data_received(self, data: bytes) -> None:
        if not self._live:
            # uvloop may deliver a first read despite pause_reading() in connection_made:
            # keep it for go_live(), in order, and stop reading (bounded by the kernel).
            self._pending += data
            if self.transport is not None:
                self.transport.pause_reading()
            return
        self.parser.receive_data(data)
        self._process()

    def eof_received(self) -> bool | None:
        self.parser.receive_eof()
        self._process()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True
        if self._close_timer is not None:
            self._close_timer.cancel()
        if self.attachment is not None:
            self.attachment.detach()
        self._closed_callback(self)

    def pause_writing(self) -> None:
        self._write_paused = True

    def resume_writing(self) -> None:
        self._write_paused = False
        if self.attachment is not None:
            self.attachment.pump()

    # ----- going live -------------------------------------------------------------------

    def go_live(self) -> None:
        """The replay was sent: read the client from now on (what came early included)."""
        self._live = True
        pending, self._pending = self._pending, b""
        if pending:
            self.data_received(pending)
        self.resume_reading()

    # ----- AttachmentSink ---------------------------------------------------------------

    @property
    def open(self) -> bool:
        return not self._lost and self.parser.state is State.OPEN

    @property
    def write_paused(self) -> bool:
        return self._write_paused

    def output_buffer(self, length: int) -> tuple[bytearray, int]:
        return wsframe.output_buffer(length)

    def send_frame(self, frame: bytes | bytearray) -> None:
        if self.transport is not None and self.open:
            self.transport.write(frame)

    def send_json(self, message: dict[str, object]) -> None:
        if self.transport is not None and self.open:
            self.transport.write(wsframe.text_frame(dumps(message).encode()))

    def pause_reading(self) -> None:
        self._reading = False
        if self.transport is not None and not self._lost:
            self.transport.pause_reading()

    def resume_reading(self) -> None:
        if not self._live or self._reading:
            return
        self._reading = True
        if self.transport is not None and not self._lost:
            self.transport.resume_reading()

    def close(self, code: int = NORMAL, reason: str = "") -> None:
        """Start the closing handshake; the socket closes when the client answers."""
        if self._lost or self.transport is None:
            return
        if self.parser.state is State.OPEN:
            self.parser.send_close(code, reason)
        self._flush()

    # ----- frames from the client -------------------------------------------------------

    def _process(self) -> None:
        for event in self.parser.events_received():
            if isinstance(event, Frame):
                self._handle(event)
        self._flush()

    def _flush(self) -> None:
        transport = self.transport
        if transport is None or self._lost:
            return
        for data in self.parser.data_to_send():
            if data:
                transport.write(data)
            else:
                # SEND_EOF: our side of the closing handshake is done. Shut down writing and
                # read on (the parser discards it) until the client closes: closing with its
                # data unread would reset the connection and lose our close frame.
                if transport.can_write_eof():
                    transport.write_eof()
                    transport.resume_reading()
                    self._arm_close_timer(transport)
                else:
                    transport.close()
                break
        if self.parser.close_expected() and not transport.is_closing():
            self._arm_close_timer(transport)
        if self.parser.state is not State.OPEN and self.attachment is not None:
            self.attachment.detach()

    def _arm_close_timer(self, transport: asyncio.Transport) -> None:
        """A client that never finishes closing is cut off after CLOSE_TIMEOUT."""
        if self._close_timer is None:
            loop = asyncio.get_running_loop()
            self._close_timer = loop.call_later(CLOSE_TIMEOUT, transport.abort)

    def _handle(self, frame: Frame) -> None:
        opcode = frame.opcode
        if opcode is Opcode.CONT:
            if self._fragment_opcode is None:
                return
            self._fragments.append(bytes(frame.data))
            if not frame.fin:
                return
            opcode, self._fragment_opcode = self._fragment_opcode, None
            data = b"".join(self._fragments)
            self._fragments = []
        elif opcode in (Opcode.TEXT, Opcode.BINARY):
            data = bytes(frame.data)
            if not frame.fin:
                self._fragment_opcode = opcode
                self._fragments = [data]
                return
        else:
            return  # ping (answered by the parser), pong, close (handled by the parser)
        attachment = self.attachment
        if attachment is None or attachment.closed:
            return
        if opcode is Opcode.BINARY:
            attachment.handle_input(data)
            return
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            # The sans-I/O layer leaves text decoding to us: 1007, as RFC 6455 says.
            self.parser.fail(INVALID_DATA, "Text frames must be valid UTF-8.")
            return
        try:
            parsed = parse_client_text(text)
        except PtyHostError as exc:
            attachment.error(exc)
            return
        attachment.handle_client(parsed)
