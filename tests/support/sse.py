"""Reading Server-Sent Events frames from an aiohttp response, one parsed event at a time."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import aiohttp


@dataclass(frozen=True)
class SseEvent:
    id: int | None
    type: str
    properties: dict[str, Any]


async def next_event(response: aiohttp.ClientResponse, within: float = 10.0) -> SseEvent:
    """The next event (comments and `retry:` lines skipped); fails after `within` seconds."""

    async def read() -> SseEvent:
        event_id: int | None = None
        data: str | None = None
        while True:
            line = await response.content.readline()
            if not line:
                raise EOFError("the event stream ended")
            text = line.decode().rstrip("\n")
            if text == "":
                if data is not None:
                    payload = json.loads(data)
                    return SseEvent(event_id, payload["type"], payload["properties"])
                continue
            if text.startswith("id: "):
                event_id = int(text[4:])
            elif text.startswith("data: "):
                data = text[6:]

    return await asyncio.wait_for(read(), within)


async def durable_events(
    response: aiohttp.ClientResponse, count: int, within: float = 10.0
) -> list[SseEvent]:
    """The next `count` durable events (those with an id), skipping ephemeral ones."""
    out: list[SseEvent] = []
    while len(out) < count:
        event = await next_event(response, within)
        if event.id is not None:
            out.append(event)
    return out


async def stream_ended(response: aiohttp.ClientResponse, within: float = 10.0) -> bool:
    """True once the server closed the stream (after whatever it still had to send)."""

    async def drain() -> bool:
        while await response.content.readline():
            pass
        return True

    return await asyncio.wait_for(drain(), within)
