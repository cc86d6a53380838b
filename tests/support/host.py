"""A real PTY host for tests: one daemon per test (the fixtures), or one per module for the
tests that each create nothing on it, stopping it for good, attachment readers (over a
handed-off WebSocket, tests/support/handoff.py), a plain shell.

The fixtures (`start_host`, `host`, `module_daemon`, `shared_host`) are a pytest plugin
registered in tests/conftest.py."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import shutil
import signal
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop.config import Settings, load_settings
from desktop.process.liveness import is_alive
from desktop.ptyhost.client import PtyHostClient
from desktop.ptyhost.hostfiles import read_host_registration
from desktop.ptyhost.launcher import ensure_host
from desktop.ptyhost.validation import AttachRequest, Role
from tests.support.handoff import HandedOffAttachment, Text, attach_websocket
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


@pytest.fixture(scope="module")
def module_daemon() -> Iterator[Settings]:
    """One PTY host daemon for a module's tests that each leave it as they found it (those
    that check they created nothing): its settings, on private dirs; stopped after the module."""
    root = Path(tempfile.mkdtemp(prefix="desk-m-", dir="/tmp"))
    settings = load_settings(data_dir=root / "data", runtime_dir=root / "run")
    settings.ensure_dirs()

    async def start() -> PtyHostClient:
        client = await ensure_host(settings)
        await client.close()
        return client

    # The client keeps the daemon's process handle: dropped, it would kill the daemon.
    started = asyncio.run(start())
    yield settings
    asyncio.run(stop_host(settings))
    del started
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
async def shared_host(module_daemon: Settings) -> AsyncIterator[PtyHostClient]:
    """A connection of this test to the module's one daemon (`module_daemon`)."""
    client = await PtyHostClient.connect(module_daemon)
    assert client is not None, "the module's PTY host is gone"
    yield client
    await client.close()


class Reader(StreamReader):
    """Reads an attachment over its handed-off WebSocket: output bytes (replay + live),
    messages, screen checkpoints, automatic acks.

    Binary frames carry no offset on this wire: `frames` records where each one starts by
    the protocol's rules (the replay from `requested`, or a checkpoint ending at `end` when
    it is truncated; live bytes from `replay_complete.end`; after `resync`, one frame of
    checkpoint: a screen's checkpoint is far below the host's 1 MiB replay chunk)."""

    def __init__(self, attachment: HandedOffAttachment, *, ack: bool = True) -> None:
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
        replay = self.attached["replay"]
        assert isinstance(replay, dict)
        self._checkpoint_at: int | None = int(replay["end"]) if replay["truncated"] else None
        self._position = int(replay["requested"])
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
        if isinstance(message, Text):
            self._on_text(message.message)
            return True
        if self._checkpoint_at is not None:
            self.checkpoints.append(message)
            self.frames.append(("checkpoint", self._checkpoint_at, len(message)))
            if self.replay_end is not None:
                self._checkpoint_at = None  # a resync's checkpoint is one frame
        else:
            self.frames.append(("output", self._position, len(message)))
            self._position += len(message)
            self.output += message
            if self.replay_end is not None:
                self._live_bytes += len(message)
        self.unacked += len(message)
        if self.ack and self.unacked:
            await self.attachment.ack(self.unacked)
            self.unacked = 0
        return True

    def _on_text(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        kind = message.get("type")
        self.frames.append((str(kind), None, 0))
        if kind == "replay_complete":
            self.replay_end = int(message["end"])
            self._checkpoint_at = None
            self._position = self.replay_end
        elif kind == "resync":
            self._checkpoint_at = int(message["end"])
            self._position = int(message["end"])

    async def type_line(self, line: str) -> None:
        await self.attachment.send_input(line.encode() + b"\r")


async def attach(
    client: PtyHostClient,
    terminal_id: str,
    *,
    ack: bool = True,
    cursor: int | None = None,
    attachment_id: str | None = None,
    role: Role = "controller",
    takeover: bool = False,
    epoch: str | None = None,
) -> Reader:
    """Attach as a browser tab does (through the handoff listener); read up to the replay's end."""
    request = AttachRequest(cursor, role, takeover, epoch, attachment_id)
    attachment = await attach_websocket(client.registration, terminal_id, request)
    reader = Reader(attachment, ack=ack)
    await reader.until_type("replay_complete")
    return reader


async def shell(client: PtyHostClient, **extra: object) -> dict[str, object]:
    return await client.create({**SHELL, **extra})
