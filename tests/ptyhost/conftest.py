"""Fixtures for PTY host tests: a real daemon process per test and attachment readers."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from desktop.config import Settings
from desktop.process.liveness import is_alive
from desktop.ptyhost.client import PtyAttachment, PtyHostClient, TextMessage
from desktop.ptyhost.hostfiles import read_host_registration
from desktop.ptyhost.launcher import ensure_host

DEADLINE = 15.0
# A shell with no rc files and a fixed prompt, so output is predictable.
SHELL: dict[str, object] = {
    "command": "bash",
    "args": ["--norc", "--noprofile"],
    "env": {"PS1": "$ "},
}


async def wait_for(
    condition: Callable[[], object], within: float = DEADLINE, what: str = ""
) -> object:
    """Poll `condition` on the loop until truthy; fail after `within` seconds."""
    deadline = time.monotonic() + within
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or condition}")
        await asyncio.sleep(0.01)


def host_settings(settings: Settings, **changes: object) -> Settings:
    return dataclasses.replace(settings, **changes)  # type: ignore[arg-type]


async def stop_host(settings: Settings) -> None:
    """Stop whatever PTY host runs for these settings, never leaving a process behind."""
    registration = read_host_registration(settings)
    if registration is None:
        return
    client = await PtyHostClient.connect(settings)
    if client is not None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.shutdown(save=False), 10)
    if is_alive(registration.pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(registration.pid, signal.SIGKILL)
        await wait_for(lambda: not is_alive(registration.pid), what="the host to die")


HostFactory = Callable[..., Awaitable[PtyHostClient]]


@pytest.fixture
async def start_host(settings: Settings) -> AsyncIterator[HostFactory]:
    """Start (or connect to) the daemon for `settings` with changes; stopped afterwards."""
    used: list[Settings] = []
    clients: list[PtyHostClient] = []

    async def start(**changes: object) -> PtyHostClient:
        current = host_settings(settings, **changes) if changes else settings
        used.append(current)
        client = await ensure_host(current)
        clients.append(client)
        return client

    yield start
    for client in clients:
        await client.close()
    for current in used:
        await stop_host(current)


@pytest.fixture
async def host(start_host: HostFactory) -> PtyHostClient:
    return await start_host()


class Reader:
    """Reads an attachment: output bytes (replay + live), messages, auto acks."""

    def __init__(self, attachment: PtyAttachment, *, ack: bool = True) -> None:
        self.attachment = attachment
        self.attached = attachment.attached
        self.ack = ack
        self.output = bytearray()
        self.checkpoints: list[bytes] = []
        self.messages: list[dict[str, object]] = []
        # ("output" | "checkpoint" | message type, offset, length)
        self.frames: list[tuple[str, int | None, int]] = []
        self.unacked = 0
        self.ended = False
        self.replay_end: int | None = None
        self._live_bytes = 0

    @property
    def cursor(self) -> int:
        replay = self.attached["replay"]
        assert isinstance(replay, dict)
        return int(replay["end"]) + self._live_bytes

    def types(self) -> list[str]:
        return [str(message.get("type")) for message in self.messages]

    def of_type(self, kind: str) -> list[dict[str, object]]:
        return [message for message in self.messages if message.get("type") == kind]

    async def step(self) -> bool:
        message = await self.attachment.recv()
        if message is None:
            self.ended = True
            return False
        if isinstance(message, TextMessage):
            self.messages.append(message.message)
            self.frames.append((str(message.message.get("type")), None, 0))
            if message.message.get("type") == "replay_complete":
                end = message.message.get("end")
                assert isinstance(end, int)
                self.replay_end = end
            return True
        if message.checkpoint:
            self.checkpoints.append(message.data)
            self.frames.append(("checkpoint", message.offset, len(message.data)))
        else:
            self.frames.append(("output", message.offset, len(message.data)))
            self.output += message.data
            if self.replay_end is not None:
                self._live_bytes += len(message.data)
        self.unacked += len(message.data)
        if self.ack and self.unacked:
            await self.attachment.ack(self.unacked)
            self.unacked = 0
        return True

    async def until(
        self, condition: Callable[[Reader], object], within: float = DEADLINE, what: str = ""
    ) -> None:
        async def loop() -> None:
            while not condition(self):
                if not await self.step() and not condition(self):
                    raise AssertionError(f"attachment ended before {what or condition}")

        try:
            await asyncio.wait_for(loop(), within)
        except TimeoutError:
            raise AssertionError(
                f"timed out waiting for {what or condition}; got {bytes(self.output[-400:])!r} "
                f"and {self.types()}"
            ) from None

    async def until_output(self, needle: bytes, within: float = DEADLINE) -> None:
        await self.until(lambda r: needle in r.output, within, what=repr(needle))

    async def until_type(self, kind: str, within: float = DEADLINE) -> dict[str, object]:
        await self.until(lambda r: kind in r.types(), within, what=kind)
        return self.of_type(kind)[-1]

    async def type_line(self, line: str) -> None:
        await self.attachment.send_input(line.encode() + b"\r")


async def attach(
    client: PtyHostClient, terminal_id: str, *, ack: bool = True, **kw: object
) -> Reader:
    attachment = await client.attach(terminal_id, **kw)  # type: ignore[arg-type]
    reader = Reader(attachment, ack=ack)
    await reader.until_type("replay_complete")
    return reader


async def shell(client: PtyHostClient, **extra: object) -> dict[str, object]:
    return await client.create({**SHELL, **extra})
