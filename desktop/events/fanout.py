"""In-process fan-out of encoded Server-Sent Events frames to live subscribers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from desktop.jsoncodec import dumps

SUBSCRIBER_QUEUE_LIMIT = 2048
HEARTBEAT_SECONDS = 15.0

Frame = tuple[int | None, bytes]
_CLOSE: Frame = (None, b"")
HEARTBEAT = b": ping\n\n"


def encode_event(
    event_type: str, properties: dict[str, object], event_id: int | None = None
) -> bytes:
    payload = dumps({"type": event_type, "properties": properties})
    head = b"id: %d\n" % event_id if event_id is not None else b""
    return b"%sdata: %s\n\n" % (head, payload)


def resync_frame(reason: str) -> bytes:
    return encode_event("server.resync", {"reason": reason, "time": int(time.time() * 1000)})


def connected_event() -> tuple[str, dict[str, object]]:
    return "server.connected", {"time": int(time.time() * 1000)}


@dataclass(eq=False)
class Subscription:
    limit: int = SUBSCRIBER_QUEUE_LIMIT
    queue: asyncio.Queue[Frame] = field(init=False)
    overflowed: bool = False

    def __post_init__(self) -> None:
        # One slot beyond the limit is reserved for the final frame.
        self.queue = asyncio.Queue(maxsize=self.limit + 1)

    def offer(self, frame: Frame) -> bool:
        """Queue a frame; False (and the subscriber is cut off) when it is too far behind."""
        if self.overflowed:
            return False
        if self.queue.qsize() >= self.limit:
            self.overflowed = True
            self._drain()
            self.queue.put_nowait((None, resync_frame("slow")))
            return False
        self.queue.put_nowait(frame)
        return True

    def close(self) -> None:
        if not self.overflowed:
            self._drain()
            self.queue.put_nowait(_CLOSE)

    def _drain(self) -> None:
        while not self.queue.empty():
            self.queue.get_nowait()

    async def items(self, heartbeat: float | None = None) -> AsyncIterator[Frame]:
        """Frames with their positions until closed; after an overflow, the resync frame is
        the last one. A heartbeat comment `(None, HEARTBEAT)` fills every quiet interval."""
        quiet = HEARTBEAT_SECONDS if heartbeat is None else heartbeat
        while True:
            try:
                frame = await asyncio.wait_for(self.queue.get(), quiet)
            except TimeoutError:
                yield None, HEARTBEAT
                continue
            if frame is _CLOSE:
                return
            yield frame
            if self.overflowed and self.queue.empty():
                return

    async def batches(self, heartbeat: float | None = None) -> AsyncIterator[list[Frame]]:
        """Like `items`, but every frame already queued comes at once, so a stream writes
        what piled up in one call instead of one per event."""
        async for first in self.items(heartbeat):
            batch = [first]
            while not self.queue.empty():
                frame = self.queue.get_nowait()
                if frame is _CLOSE:
                    yield batch
                    return
                batch.append(frame)
            yield batch  # after an overflow `items` ends once the resync frame is out

    async def frames(self) -> AsyncIterator[bytes]:
        async for _, frame in self.items():
            yield frame


class Fanout:
    """Publishing never waits: every subscriber has a bounded queue, and one that falls too far
    behind is cut off with a final `server.resync` frame (its pending frames are dropped, so
    memory stays bounded) and must refetch state and resume from its last event id. Frames
    are encoded once per event, not once per subscriber. Durable frames carry their global
    position so a stream that replays from the log can drop the live copies it already sent.
    """

    def __init__(self, limit: int = SUBSCRIBER_QUEUE_LIMIT) -> None:
        self._subscribers: set[Subscription] = set()
        self.limit = limit
        self.published = 0

    def subscribe(self) -> Subscription:
        sub = Subscription(self.limit)
        self._subscribers.add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        self._subscribers.discard(sub)

    @property
    def subscriber_count(self) -> int:
        return len(self._subscribers)

    def publish(
        self, event_type: str, properties: dict[str, object], event_id: int | None = None
    ) -> None:
        """Queue the event for every subscriber; encoded once (not at all when nobody
        listens), never awaits."""
        if not self._subscribers:
            self.published += 1
            return
        self.publish_frame(encode_event(event_type, properties, event_id), event_id)

    def publish_frame(self, frame: bytes, position: int | None = None) -> None:
        self.published += 1
        item = (position, frame)
        for sub in list(self._subscribers):
            if not sub.offer(item):
                self._subscribers.discard(sub)

    def close(self) -> None:
        """End every stream (service shutdown)."""
        for sub in list(self._subscribers):
            sub.close()
        self._subscribers.clear()
