"""In-process event bus fanned out to Server-Sent Events subscribers.

Publishing never waits: every subscriber has a bounded queue, and one that falls too far
behind is disconnected (its EventSource reconnects and the UI refetches state) instead of
slowing the publisher or growing without bound.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

SUBSCRIBER_QUEUE_LIMIT = 2048
HEARTBEAT_SECONDS = 15.0

_CLOSE = b""


def encode_event(type: str, properties: dict[str, object], event_id: int | None = None) -> bytes:
    payload = json.dumps({"type": type, "properties": properties}, separators=(",", ":"))
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}data: {payload}\n\n".encode()


@dataclass(eq=False)
class Subscription:
    queue: asyncio.Queue[bytes] = field(
        default_factory=lambda: asyncio.Queue(maxsize=SUBSCRIBER_QUEUE_LIMIT)
    )
    overflowed: bool = False

    async def frames(self) -> AsyncIterator[bytes]:
        """Encoded frames until the bus closes or this subscriber overflowed; heartbeats between."""
        while True:
            try:
                frame = await asyncio.wait_for(self.queue.get(), HEARTBEAT_SECONDS)
            except TimeoutError:
                yield b": ping\n\n"
                continue
            if frame is _CLOSE or self.overflowed:
                return
            yield frame


class EventBus:
    def __init__(self) -> None:
        self._subscribers: set[Subscription] = set()

    def subscribe(self) -> Subscription:
        sub = Subscription()
        self._subscribers.add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        self._subscribers.discard(sub)

    def publish(
        self, type: str, properties: dict[str, object], event_id: int | None = None
    ) -> None:
        """Queue the event for every subscriber; encoded once, never awaits."""
        frame = encode_event(type, properties, event_id)
        for sub in list(self._subscribers):
            if sub.overflowed:
                continue
            try:
                sub.queue.put_nowait(frame)
            except asyncio.QueueFull:
                sub.overflowed = True
                self._subscribers.discard(sub)
                self._wake(sub)

    def close(self) -> None:
        """End every stream (service shutdown)."""
        for sub in list(self._subscribers):
            self._wake(sub)
        self._subscribers.clear()

    @staticmethod
    def _wake(sub: Subscription) -> None:
        # Make room so the close marker always fits.
        while True:
            try:
                sub.queue.put_nowait(_CLOSE)
                return
            except asyncio.QueueFull:
                sub.queue.get_nowait()


def connected_event() -> tuple[str, dict[str, object]]:
    return "server.connected", {"time": int(time.time() * 1000)}
