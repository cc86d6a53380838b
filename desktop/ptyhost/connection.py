"""A service's control connection to the daemon: the secret hello, then requests (answered
through the operation table) and the host's events, each connection with bounded buffers."""

from __future__ import annotations

import asyncio
import hmac
import logging
from collections.abc import Awaitable
from typing import cast

from desktop.ptyhost.host import PtyHost
from desktop.ptyhost.operations import Operations
from desktop.ptyhost.protocol import (
    MAX_HELLO_PAYLOAD,
    MAX_PAYLOAD,
    PROTOCOL_VERSION,
    FrameDecoder,
    JsonFrame,
    ProtocolError,
    PtyHostError,
    encode_json,
)

log = logging.getLogger("desk.ptyhost")

HELLO_TIMEOUT = 5.0
# A service that stops reading its events is dropped past this much unsent output.
BUFFER_LIMIT = 16 * 1024 * 1024


class HostConnection(asyncio.Protocol):
    """One service connection: a hello with the host's secret, then control requests."""

    def __init__(self, host: PtyHost, operations: Operations) -> None:
        self.host = host
        self.operations = operations
        self.transport: asyncio.Transport | None = None
        self.state = "hello"
        self.decoder = FrameDecoder(MAX_HELLO_PAYLOAD)
        self.tasks: set[asyncio.Task[None]] = set()
        self._hello_timer: asyncio.TimerHandle | None = None

    # ----- asyncio.Protocol -------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports implement asyncio.Transport without subclassing it.
        self.transport = cast(asyncio.Transport, transport)
        self._hello_timer = self.host.loop.call_later(HELLO_TIMEOUT, self._hello_timeout)

    def data_received(self, data: bytes) -> None:
        if self.state == "closed":
            return
        try:
            frames = self.decoder.feed(data)
        except ProtocolError as exc:
            self.fail("protocol.invalid_frame", f"Invalid frame: {exc}")
            return
        for frame in frames:
            if self.state == "closed":
                return
            if self.state == "hello":
                self._hello(frame)
            else:
                self.operations.handle(self, frame.message)

    def connection_lost(self, exc: Exception | None) -> None:
        was_open = self.state == "control"
        self.state = "closed"
        if self._hello_timer is not None:
            self._hello_timer.cancel()
        for task in list(self.tasks):
            task.cancel()
        if was_open:
            self.host.link_closed(self)

    # ----- sending ----------------------------------------------------------------------

    def send_json(self, message: dict[str, object]) -> None:
        if self.transport is None or self.state == "closed":
            return
        if self.transport.get_write_buffer_size() > BUFFER_LIMIT:
            log.warning("closing a control connection that stopped reading")
            self.close()
            return
        self.transport.write(encode_json(message))

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def fail(self, error_type: str, message: str) -> None:
        """Answer a protocol violation with an error frame and close this connection only."""
        log.warning("closing a connection: %s", message)
        if self.transport is not None and self.state != "closed":
            self.transport.write(encode_json(PtyHostError(error_type, message).frame()))
            self.transport.close()
        if self.state == "control":
            self.host.link_closed(self)
        self.state = "closed"

    def spawn(self, work: Awaitable[None]) -> None:
        """Run a request's async work; cancelled if the connection goes first."""
        task = asyncio.ensure_future(work)
        self.tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("connection task failed", exc_info=task.exception())
            self.close()

    # ----- the hello --------------------------------------------------------------------

    def _hello_timeout(self) -> None:
        if self.state == "hello":
            self.fail("auth.timeout", "No hello within the time limit.")

    def _hello(self, frame: JsonFrame) -> None:
        message = frame.message
        secret = message.get("secret")
        if message.get("type") != "hello" or not isinstance(secret, str):
            self.fail("auth.failed", "The first frame must be a hello with the host's secret.")
            return
        if not hmac.compare_digest(secret.encode(), self.host.secret.encode()):
            self.fail("auth.failed", "Wrong secret.")
            return
        if message.get("protocol") != PROTOCOL_VERSION:
            self.fail(
                "protocol.version",
                f"This PTY host speaks protocol {PROTOCOL_VERSION}, not {message.get('protocol')}.",
            )
            return
        if message.get("role") != "control":
            self.fail("protocol.invalid_role", "role must be 'control'.")
            return
        if self._hello_timer is not None:
            self._hello_timer.cancel()
            self._hello_timer = None
        self.state = "control"
        self.decoder.max_payload = MAX_PAYLOAD
        host = self.host
        self.send_json(
            {"type": "welcome", "protocol": PROTOCOL_VERSION, "epoch": host.epoch, "pid": host.pid}
        )
        host.link_opened(self)
