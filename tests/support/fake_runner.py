"""A stand-in for the runner in recovery tests (a scripted drain): it holds the session's claim
while a turn runs, as the real runner does, and lets the test decide what a turn does.
Everything else (store, bus, job rows, notices) is real."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from desktop.events.bus import DurableBus, draft
from desktop.store import log
from desktop.store import sessions as q

Drain = Callable[[str], Awaitable[None]]


async def _nothing(session_id: str) -> None:
    return None


class FakeRunner:
    def __init__(
        self,
        bus: DurableBus,
        drain: Drain = _nothing,
        on_user_interrupt: Callable[[str], Awaitable[object]] | None = None,
    ) -> None:
        self.bus = bus
        self.drain = drain
        self.on_user_interrupt = on_user_interrupt
        self.drained: list[str] = []
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._woken: set[str] = set()

    def active(self) -> set[str]:
        return set(self._tasks)

    def wake(self, session_id: str) -> None:
        if session_id in self._tasks:
            self._woken.add(session_id)
        else:
            self._start(session_id)

    def resume(self, session_id: str) -> None:
        if session_id not in self._tasks:
            self._start(session_id)

    async def wait_idle(self, session_id: str) -> None:
        while (task := self._tasks.get(session_id)) is not None:
            await asyncio.wait([task])

    async def interrupt(self, session_id: str) -> bool:
        task = self._tasks.get(session_id)
        if task is None:
            return False
        if self.on_user_interrupt is not None:
            await self.on_user_interrupt(session_id)
        task.cancel()
        await asyncio.wait([task])
        await self.bus.publish(
            draft(session_id, "session.execution.interrupted", {"reason": "user"})
        )
        return True

    async def close(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _start(self, session_id: str) -> None:
        self._tasks[session_id] = asyncio.create_task(self._turn(session_id))

    async def _turn(self, session_id: str) -> None:
        store = self.bus.store
        try:
            await store.run(lambda: q.claim(store.connection(), session_id, log.now_ms()))
            self.drained.append(session_id)
            await self.drain(session_id)
            await store.run(lambda: q.release(store.connection(), session_id))
        finally:
            del self._tasks[session_id]
            if session_id in self._woken:
                self._woken.discard(session_id)
                self._start(session_id)


async def deliver(bus: DurableBus, session_id: str) -> list[str]:
    """What the runner does at a step: take the waiting inbox rows; their texts."""
    store = bus.store

    def take() -> list[str]:
        conn = store.connection()
        with store.db.atomic():
            rows = q.inbox_pending(conn, session_id)
            q.inbox_take(conn, [r["id"] for r in rows])
        return [str(r["data"].get("text", "")) for r in rows]

    return await store.run(take)
