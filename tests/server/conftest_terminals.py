"""Fixtures for the terminal routes: the real app, a real PTY host, WebSocket readers.

Imported explicitly by the terminal test modules (tests/conftest.py belongs to the lead)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestClient

from desktop.config import Settings
from tests.ptyhost.conftest import stop_host

SHELL = {"command": "bash", "args": ["--norc", "--noprofile"], "env": {"PS1": "$ "}}
DEADLINE = 15.0


@pytest.fixture
async def api(client: TestClient, settings: Settings) -> AsyncIterator[TestClient]:
    """The service's test client; the PTY host it starts is stopped afterwards."""
    yield client
    await stop_host(settings)


class WsReader:
    """A WebSocket attachment: output bytes, text messages, automatic acks."""

    def __init__(self, socket: aiohttp.ClientWebSocketResponse, *, ack: bool = True) -> None:
        self.socket = socket
        self.ack = ack
        self.attached: dict[str, Any] = {}
        self.output = bytearray()
        self.messages: list[dict[str, Any]] = []
        self.kinds: list[str] = []  # "binary" or the text message's type, in order
        self.closed = False
        self.replay_end: int | None = None
        self.replay_bytes = 0

    def types(self) -> list[str]:
        return [str(m.get("type")) for m in self.messages]

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [m for m in self.messages if m.get("type") == kind]

    async def step(self) -> bool:
        message = await self.socket.receive()
        if message.type == aiohttp.WSMsgType.BINARY:
            self.output += message.data
            self.kinds.append("binary")
            if self.ack:
                with contextlib.suppress(ConnectionResetError):  # the server may be closing
                    await self.socket.send_str(
                        json.dumps({"type": "ack", "bytes": len(message.data)})
                    )
            return True
        if message.type == aiohttp.WSMsgType.TEXT:
            parsed = json.loads(message.data)
            if parsed.get("type") == "attached":
                self.attached = parsed
            if parsed.get("type") == "replay_complete":
                self.replay_end = int(parsed["end"])
                self.replay_bytes = len(self.output)
            self.messages.append(parsed)
            self.kinds.append(str(parsed.get("type")))
            return True
        self.closed = True
        return False

    async def until(
        self, condition: Callable[[WsReader], object], within: float = DEADLINE, what: str = ""
    ) -> None:
        async def loop() -> None:
            while not condition(self):
                if not await self.step() and not condition(self):
                    raise AssertionError(f"socket closed before {what or condition}")

        try:
            await asyncio.wait_for(loop(), within)
        except TimeoutError:
            raise AssertionError(
                f"timed out waiting for {what}; got {bytes(self.output[-300:])!r} {self.types()}"
            ) from None

    async def until_output(self, needle: bytes, within: float = DEADLINE) -> None:
        await self.until(lambda r: needle in r.output, within, what=repr(needle))

    async def until_type(self, kind: str, within: float = DEADLINE) -> dict[str, Any]:
        await self.until(lambda r: kind in r.types(), within, what=kind)
        return self.of_type(kind)[-1]

    async def type_line(self, line: str) -> None:
        await self.socket.send_bytes(line.encode() + b"\r")

    @property
    def cursor(self) -> int:
        """replay.end plus the bytes received since replay_complete."""
        assert self.replay_end is not None, "no replay_complete yet"
        return self.replay_end + len(self.output) - self.replay_bytes

    async def settle_replay(self) -> None:
        await self.until_type("replay_complete")
