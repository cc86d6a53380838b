"""The service's control connection to the PTY host (got through `launcher.ensure_host`):
requests, their answers, host events. Attachments do not go through here: a browser's
WebSocket is handed to the host (handoff_client.py).
"""

from __future__ import annotations

import asyncio
import builtins
import collections
import contextlib
import itertools
import logging
from collections.abc import AsyncIterator
from typing import cast

from desktop.config import Settings
from desktop.process.liveness import wait_for_exit_async
from desktop.process.registration import HostRegistration
from desktop.ptyhost.hostfiles import read_host_registration, usable
from desktop.ptyhost.protocol import (
    MAX_PAYLOAD,
    PROTOCOL_VERSION,
    FrameDecoder,
    JsonFrame,
    ProtocolError,
    PtyHostError,
    PtyHostUnavailable,
    encode_json,
)

log = logging.getLogger("desk.ptyhost.client")

CONNECT_TIMEOUT = 5.0
INBOUND_LIMIT = 2 * 1024 * 1024
EVENT_QUEUE_LIMIT = 10_000
SHUTDOWN_WAIT = 10.0


class FramedConnection(asyncio.Protocol):
    """Client end of a control connection: decoded frames in a bounded inbox."""

    def __init__(self, inbound_limit: int = INBOUND_LIMIT) -> None:
        self.transport: asyncio.Transport | None = None
        self.decoder = FrameDecoder(MAX_PAYLOAD)
        self.inbound_limit = inbound_limit
        self._frames: collections.deque[JsonFrame] = collections.deque()
        self._queued = 0
        self._reading_paused = False
        self._waiter: asyncio.Future[None] | None = None
        self._closed = False
        self._error: Exception | None = None

    # asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports implement asyncio.Transport without subclassing it.
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        try:
            frames = self.decoder.feed(data)
        except ProtocolError as exc:
            self._error = exc
            self._wake()
            if self.transport is not None:
                self.transport.close()
            return
        for frame in frames:
            self._frames.append(frame)
            self._queued += _frame_size(frame)
        if self._queued > self.inbound_limit and not self._reading_paused and self.transport:
            self.transport.pause_reading()
            self._reading_paused = True
        self._wake()

    def eof_received(self) -> bool | None:
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # API

    @property
    def closed(self) -> bool:
        return self._closed

    def next_frame(self) -> JsonFrame | None:
        """A frame already received, if any (no waiting)."""
        if not self._frames:
            return None
        frame = self._frames.popleft()
        self._queued -= _frame_size(frame)
        if self._reading_paused and self._queued <= self.inbound_limit // 2 and self.transport:
            self._reading_paused = False
            self.transport.resume_reading()
        return frame

    async def recv(self) -> JsonFrame | None:
        """The next frame; None once the connection is closed and drained."""
        while True:
            frame = self.next_frame()
            if frame is not None:
                return frame
            if self._error is not None:
                raise PtyHostUnavailable(f"The PTY host sent an invalid frame: {self._error}")
            if self._closed:
                return None
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    def write(self, data: bytes | bytearray) -> None:
        if self._closed or self.transport is None or self.transport.is_closing():
            raise PtyHostUnavailable("The connection to the PTY host is closed.")
        self.transport.write(data)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


def _frame_size(frame: JsonFrame) -> int:
    return len(frame.text)


async def open_host_connection(registration: HostRegistration) -> FramedConnection:
    """Connect to the host's socket and prove the secret; raises PtyHostUnavailable."""
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout(CONNECT_TIMEOUT):
            _, connection = await loop.create_unix_connection(FramedConnection, registration.socket)
            connection.write(
                encode_json(
                    {
                        "type": "hello",
                        "secret": registration.secret,
                        "protocol": PROTOCOL_VERSION,
                        "role": "control",
                    }
                )
            )
            welcome = await connection.recv()
    except (OSError, TimeoutError) as exc:
        raise PtyHostUnavailable(f"Cannot connect to the PTY host: {exc}") from None
    if not isinstance(welcome, JsonFrame) or welcome.message.get("type") != "welcome":
        connection.close()
        detail = _error_text(welcome)
        raise PtyHostUnavailable(f"The PTY host refused the connection: {detail}")
    return connection


def _frame_error(frame: JsonFrame | None) -> PtyHostError | None:
    """The error an error frame carries."""
    if isinstance(frame, JsonFrame) and frame.message.get("type") == "error":
        return PtyHostError.from_json(frame.message.get("error"))
    return None


def _error_text(frame: JsonFrame | None) -> str:
    error = _frame_error(frame)
    if error is not None:
        return error.message
    return frame.text if isinstance(frame, JsonFrame) else "connection closed"


def _raise_for(answer: dict[str, object]) -> object:
    if answer.get("ok") is True:
        return answer.get("result")
    raise PtyHostError.from_json(answer.get("error"))


class PtyHostClient:
    """A control connection to the PTY host: requests, answers and terminal events."""

    def __init__(self, registration: HostRegistration, connection: FramedConnection) -> None:
        self.registration = registration
        self._connection = connection
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, object]]] = {}
        self._subscribers: set[asyncio.Queue[dict[str, object] | None]] = set()
        self._reader = asyncio.ensure_future(self._read_loop())
        self.process: asyncio.subprocess.Process | None = None

    # ----- finding the host -------------------------------------------------------------

    @classmethod
    async def connect(cls, settings: Settings) -> PtyHostClient | None:
        """A client of the running host, or None when none is registered and alive.

        Starting one when there is none is desktop.ptyhost.launcher's job."""
        registration = await asyncio.to_thread(read_host_registration, settings)
        if registration is None or not usable(registration):
            return None
        try:
            connection = await open_host_connection(registration)
        except PtyHostUnavailable:
            return None
        return cls(registration, connection)

    # ----- plumbing ---------------------------------------------------------------------

    @property
    def epoch(self) -> str:
        return self.registration.epoch

    @property
    def pid(self) -> int:
        return self.registration.pid

    @property
    def closed(self) -> bool:
        return self._connection.closed

    async def _read_loop(self) -> None:
        try:
            while True:
                frame = await self._connection.recv()
                if frame is None:
                    break
                if not isinstance(frame, JsonFrame):
                    log.warning("unexpected frame on the control connection")
                    continue
                message = frame.message
                request_id = message.get("id")
                if isinstance(request_id, int) and "ok" in message:
                    waiter = self._pending.pop(request_id, None)
                    if waiter is not None and not waiter.done():
                        waiter.set_result(message)
                elif "event" in message:
                    self._publish(message)
                elif (error := _frame_error(frame)) is not None:
                    log.warning("PTY host error: %s", error.message)
        except PtyHostUnavailable as exc:
            log.warning("%s", exc)
        finally:
            self._connection.close()
            for waiter in self._pending.values():
                if not waiter.done():
                    waiter.set_exception(PtyHostUnavailable("The PTY host connection closed."))
            self._pending.clear()
            for queue in list(self._subscribers):
                _put_dropping_oldest(queue, None)

    def _publish(self, message: dict[str, object]) -> None:
        for queue in list(self._subscribers):
            _put_dropping_oldest(queue, message)

    async def request(self, op: str, **params: object) -> object:
        if self.closed:
            raise PtyHostUnavailable("The connection to the PTY host is closed.")
        request_id = next(self._ids)
        waiter: asyncio.Future[dict[str, object]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = waiter
        try:
            self._connection.write(encode_json({"id": request_id, "op": op, **params}))
            return _raise_for(await waiter)
        finally:
            self._pending.pop(request_id, None)

    async def events(self) -> AsyncIterator[dict[str, object]]:
        """Host events (`created`, `updated`, `exited`, `deleted`) until the connection ends."""
        queue: asyncio.Queue[dict[str, object] | None] = asyncio.Queue(EVENT_QUEUE_LIMIT)
        self._subscribers.add(queue)
        try:
            if self.closed:
                return
            while True:
                event = await queue.get()
                if event is None:
                    return
                yield event
        finally:
            self._subscribers.discard(queue)

    async def close(self) -> None:
        self._connection.close()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader

    # ----- operations -------------------------------------------------------------------

    async def ping(self) -> dict[str, object]:
        return _as_dict(await self.request("ping"))

    async def list(self, group: str | None = None) -> list[dict[str, object]]:
        result = await self.request("list", group=group)
        assert isinstance(result, list)
        return result

    async def create(self, params: dict[str, object]) -> dict[str, object]:
        body = {key: value for key, value in params.items() if key not in ("id", "op")}
        return _as_dict(await self.request("create", **body))

    async def get(self, terminal_id: str) -> dict[str, object]:
        return _as_dict(await self.request("get", terminal=terminal_id))

    async def update(self, terminal_id: str, changes: dict[str, object]) -> dict[str, object]:
        body = {k: v for k, v in changes.items() if k in ("size", "title", "attachment_id")}
        return _as_dict(await self.request("update", terminal=terminal_id, **body))

    async def delete(self, terminal_id: str) -> None:
        await self.request("delete", terminal=terminal_id)

    async def snapshot(self, terminal_id: str) -> dict[str, object]:
        return _as_dict(await self.request("snapshot", terminal=terminal_id))

    # ----- jobs (wire shapes in desktop/ptyhost/jobs.py) --------------------------------

    async def job_start(
        self,
        key: str,
        command: str,
        cwd: str,
        *,
        kill_after: float | None = None,
        env: dict[str, str] | None = None,
        title: str | None = None,
    ) -> dict[str, object]:
        """`{job, created}`: the job under `key`, started now or found (never started twice).
        `kill_after` (the wire's `timeout`): seconds after which the host kills its group."""
        return _as_dict(
            await self.request(
                "job_start",
                key=key,
                command=command,
                cwd=cwd,
                timeout=kill_after,
                env=env,
                title=title,
            )
        )

    async def job_get(self, key: str) -> dict[str, object]:
        return _as_dict(await self.request("job_get", key=key))

    async def job_list(self, session: str | None = None) -> builtins.list[dict[str, object]]:
        result = await self.request("job_list", session=session)
        assert isinstance(result, list)
        return result

    async def job_wait(self, key: str, within: float | None = None) -> dict[str, object]:
        """The job once it exited, or after `within` seconds (then still running)."""
        return _as_dict(await self.request("job_wait", key=key, within=within))

    async def job_output(self, key: str, tail_bytes: int | None = None) -> dict[str, object]:
        params: dict[str, object] = {"key": key}
        if tail_bytes is not None:
            params["tail_bytes"] = tail_bytes
        return _as_dict(await self.request("job_output", **params))

    async def job_kill(self, key: str) -> dict[str, object]:
        return _as_dict(await self.request("job_kill", key=key))

    async def job_collect(self, key: str) -> dict[str, object]:
        return _as_dict(await self.request("job_collect", key=key))

    async def job_remove(
        self, key: str | None = None, *, session: str | None = None
    ) -> dict[str, object]:
        return _as_dict(await self.request("job_remove", key=key, session=session))

    async def shutdown(
        self, save: bool = True, *, wait: float = SHUTDOWN_WAIT
    ) -> dict[str, object]:
        """Ask the host to save (or not) its terminals and exit; waits until it is gone."""
        result = _as_dict(await self.request("shutdown", save=save))
        await wait_for_exit_async(self.pid, wait)
        await self.close()
        return result


def _as_dict(value: object) -> dict[str, object]:
    if not isinstance(value, dict):
        raise PtyHostError(
            "pty.host_error", "The PTY host answered with something unexpected.", 502
        )
    return value


def _put_dropping_oldest(
    queue: asyncio.Queue[dict[str, object] | None], item: dict[str, object] | None
) -> None:
    while True:
        try:
            queue.put_nowait(item)
            return
        except asyncio.QueueFull:
            queue.get_nowait()
