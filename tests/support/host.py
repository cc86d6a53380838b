"""A real PTY host for tests: one daemon per test (the fixtures), stopping it for good,
attachment readers, a plain shell.

The fixtures are imported by the conftests of the suites that need a host (ptyhost, tools)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import signal
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from desktop.config import Settings
from desktop.process.liveness import is_alive
from desktop.ptyhost.client import PtyAttachment, PtyHostClient, TextMessage
from desktop.ptyhost.hostfiles import read_host_registration
from desktop.ptyhost.launcher import ensure_host
from tests.support.reader import StreamReader
from tests.support.wait import wait_for

# A shell with no rc files and a fixed prompt, so output is predictable.
SHELL: dict[str, object] = {
    "command": "bash",
    "args": ["--norc", "--noprofile"],
    "env": {"PS1": "$ "},
}


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


class Reader(StreamReader):
    """Reads an attachment: output bytes (replay + live), messages, auto acks."""

    def __init__(self, attachment: PtyAttachment, *, ack: bool = True) -> None:
        super().__init__()
        self.attachment = attachment
        self.attached = attachment.attached
        self.ack = ack
        self.checkpoints: list[bytes] = []
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
