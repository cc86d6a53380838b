"""The one WebSocket reader for terminal connections: output, messages, automatic acks."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import aiohttp

from tests.support.reader import StreamReader


class WsReader(StreamReader):
    """A WebSocket attachment: output bytes, text messages, automatic acks."""

    def __init__(self, socket: aiohttp.ClientWebSocketResponse, *, ack: bool = True) -> None:
        super().__init__()
        self.socket = socket
        self.ack = ack
        self.attached: dict[str, Any] = {}
        self.kinds: list[str] = []  # "binary" or the text message's type, in order
        self.closed = False
        self.replay_end: int | None = None
        self.replay_bytes = 0

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

    async def type_line(self, line: str) -> None:
        await self.socket.send_bytes(line.encode() + b"\r")

    @property
    def cursor(self) -> int:
        """replay.end plus the bytes received since replay_complete."""
        assert self.replay_end is not None, "no replay_complete yet"
        return self.replay_end + len(self.output) - self.replay_bytes

    async def settle_replay(self) -> None:
        await self.until_type("replay_complete")
