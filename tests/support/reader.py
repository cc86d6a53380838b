"""What a test reads off a terminal stream, whatever carries it.

A WebSocket (tests/support/websocket.py) and a PTY host attachment (tests/support/host.py)
deliver the same things, output bytes and typed messages; the waiting is written once here
and each transport supplies only `step`, which reads one frame."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Self

from tests.support.wait import DEADLINE


class StreamReader(ABC):
    """Output bytes and messages read so far, and waits on conditions over them."""

    def __init__(self) -> None:
        self.output = bytearray()
        self.messages: list[dict[str, Any]] = []

    @abstractmethod
    async def step(self) -> bool:
        """Read one frame; False once the stream has ended."""

    def types(self) -> list[str]:
        return [str(message.get("type")) for message in self.messages]

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [message for message in self.messages if message.get("type") == kind]

    async def until(
        self, condition: Callable[[Self], object], within: float = DEADLINE, what: str = ""
    ) -> None:
        async def loop() -> None:
            while not condition(self):
                if not await self.step() and not condition(self):
                    raise AssertionError(f"stream ended before {what or condition}")

        try:
            await asyncio.wait_for(loop(), within)
        except TimeoutError:
            raise AssertionError(
                f"timed out waiting for {what or condition}; got {bytes(self.output[-400:])!r} "
                f"and {self.types()}"
            ) from None

    async def until_output(self, needle: bytes, within: float = DEADLINE) -> None:
        await self.until(lambda r: needle in r.output, within, what=repr(needle))

    async def until_type(self, kind: str, within: float = DEADLINE) -> dict[str, Any]:
        await self.until(lambda r: kind in r.types(), within, what=kind)
        return self.of_type(kind)[-1]
