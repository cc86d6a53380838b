"""Fire-and-forget work with an owner: background notices and recovery waits."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable


class OwnedTasks:
    """Each task is kept until it ends (so it is never garbage-collected mid-flight), a failure is
    logged instead of vanishing as an unretrieved exception, and `close()` cancels what still
    runs: the owner's shutdown leaves no task behind.
    """

    def __init__(self, log: logging.Logger, failure: str) -> None:
        self._log = log
        self._failure = failure
        self._tasks: set[asyncio.Task[None]] = set()

    def spawn(self, work: Awaitable[None]) -> None:
        async def run() -> None:
            try:
                await work
            except asyncio.CancelledError:
                raise
            except Exception:
                self._log.exception(self._failure)

        task = asyncio.create_task(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
