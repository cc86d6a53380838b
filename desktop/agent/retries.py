"""Retrying a provider request after a retryable failure: the back-off, its
`session.retry.scheduled`, and the settings of the moment the next attempt is sent with."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from desktop.events.bus import DurableBus, draft
from desktop.provider.client import ChatClient
from desktop.provider.errors import ProviderError
from desktop.provider.retry import retry_delay


class SettingsChanges:
    """Wakes the back-offs waiting when the provider settings or a session's model change;
    `count` numbers the changes, so a waiter misses none made since it looked."""

    def __init__(self) -> None:
        self.count = 0
        self._event = asyncio.Event()

    def notify(self) -> None:
        self.count += 1
        self._event.set()
        self._event = asyncio.Event()

    async def wait(self, seconds: float, seen: int) -> bool:
        """True when a change came after change number `seen` and before `seconds` passed."""
        if self.count != seen:
            return True
        if seconds <= 0:
            return False
        try:
            await asyncio.wait_for(self._event.wait(), seconds)
        except TimeoutError:
            return False
        return True


@dataclass(frozen=True)
class Retries:
    """The retries of one session's requests: `client` gives the client for the settings
    now (None: no provider configured); `scale` shrinks the back-off in tests (never a
    server's retry-after)."""

    bus: DurableBus
    session_id: str
    client: Callable[[], Awaitable[ChatClient | None]]
    changes: SettingsChanges
    scale: float = 1.0

    def delay(self, attempt: int, exc: ProviderError) -> float | None:
        """Seconds before the retry of failed attempt `attempt`; None: no retry."""
        delay = retry_delay(attempt, exc)
        if delay is None:
            return None
        if exc.retry_after is not None:
            return max(delay * self.scale, exc.retry_after)
        return delay * self.scale

    async def wait(
        self,
        delay: float,
        attempt: int,
        exc: ProviderError,
        current: ChatClient,
        message_id: str | None = None,
    ) -> ChatClient | None:
        """Announces the retry, waits out `delay` and gives the client for the settings then
        (None: no provider is configured any more); settings that changed from `current`'s
        end the wait at once."""
        data: dict[str, object] = {
            "attempt": attempt,
            "at": int((time.time() + delay) * 1000),
            "error": {"type": exc.kind, "message": exc.message},
        }
        if message_id is not None:
            data["message_id"] = message_id
        await self.bus.publish(draft(self.session_id, "session.retry.scheduled", data))
        loop = asyncio.get_running_loop()
        end = loop.time() + delay
        seen = -1  # the settings are read once before waiting: they may have changed already
        while await self.changes.wait(end - loop.time(), seen):
            seen = self.changes.count
            now = await self.client()
            if now is None or now.profile != current.profile:
                return now
        return await self.client()
