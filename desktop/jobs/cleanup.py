"""Cleanup of finished job terminals and ended jobs' rows: the one owner of the retention
rule.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable, Iterable
from typing import Protocol

from desktop.events.bus import DurableBus
from desktop.jobs.model import ShellRecovery
from desktop.jobs.registry import JobRegistry
from desktop.jobs.tasks import OwnedTasks
from desktop.ptyhost.protocol import PtyHostError
from desktop.ptyhost.validation import parse_job_key
from desktop.store import sessions as q
from desktop.store.log import now_ms
from desktop.tools.base import ToolError
from desktop.tools.shell import JobState

_log = logging.getLogger("desk.jobs.cleanup")

# What a host that is not running (or went away mid-way) answers through ShellJobs.
_UNREACHABLE = (ToolError, PtyHostError, OSError)

SWEEP_EVERY_MAX = 600.0  # a job outlives its retention by at most this much
SWEEP_EVERY_MIN = 0.05


class CleanupHost(Protocol):
    """What the sweep needs of the PTY host's jobs (desktop.jobs.host.ShellJobs,
    connected only to a host that already runs)."""

    async def list_jobs(self, session_id: str | None = None) -> list[JobState]: ...
    async def remove_job(self, key: str) -> bool: ...
    async def remove_session_jobs(self, session_id: str) -> int: ...


def sweep_interval(retention: float) -> float:
    return min(SWEEP_EVERY_MAX, max(SWEEP_EVERY_MIN, retention / 2))


class JobCleanup:
    """The sweep of finished job terminals and ended jobs' rows (its rule: docs/ARCHITECTURE.md):

        cleanup = JobCleanup(bus, registry, host, retention=settings.job_retention_seconds)
        cleanup.start()  # at start-up, after recovery: sweep now, then on a timer
        await cleanup.sessions_deleted(tree)  # DELETE /api/session/{id}: the tree's jobs
        await cleanup.close()

    Sweeps run on a task of their own, never on a request's path.
    """

    def __init__(
        self,
        bus: DurableBus,
        jobs: JobRegistry,
        host: CleanupHost | None,
        *,
        retention: float,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self.store = bus.store
        self.jobs = jobs
        self.host = host
        self.retention = retention
        self.every = sweep_interval(retention)
        self._clock = clock
        self._tasks = OwnedTasks(_log, "the job cleanup timer failed")
        self._started = False

    def start(self) -> None:
        """Sweep now (recovery has run: every marker and open call is where it will stay),
        then every `self.every` seconds, until `close`."""
        if not self._started:
            self._started = True
            self._tasks.spawn(self._timer())

    async def close(self) -> None:
        await self._tasks.close()

    async def _timer(self) -> None:
        while True:
            try:
                await self.sweep()
            except Exception:  # a failed sweep (host gone mid-way, say) waits for the next
                _log.warning("job cleanup sweep failed", exc_info=True)
            try:
                await self.expire_rows()
            except Exception:
                _log.warning("job row cleanup failed", exc_info=True)
            await asyncio.sleep(self.every)

    async def expire_rows(self) -> int:
        """Remove the job rows that owe nothing, past the retention or of sessions that are
        gone, as the sweep removes their terminals; how many went."""
        return await self.jobs.store.expire(int(self._clock() - self.retention * 1000))

    # ----- the sweep -----------------------------------------------------------------------

    async def sweep(self) -> list[str]:
        """Remove every finished job the rules above allow; the keys removed."""
        if self.host is None:
            return []
        try:
            states = await self.host.list_jobs()
        except _UNREACHABLE:
            return []  # no PTY host running: no jobs to remove
        finished = [s for s in states if s.status == "exited"]
        if not finished:
            return []
        owed = await self._owed()
        by_session: dict[str, dict[str, JobState]] = {}
        for state in finished:
            if state.key in owed:
                continue
            _, session_id, call_id = parse_job_key(state.key)
            by_session.setdefault(session_id, {})[call_id] = state
        if not by_session:
            return []
        cutoff = self._clock() - self.retention * 1000
        sessions = list(by_session)

        def needed(conn: sqlite3.Connection) -> dict[str, set[str] | None]:
            # None: the session is gone (every finished job of it may go at once).
            return {
                sid: (q.open_tool_calls(conn, sid) if q.get_session(conn, sid) else None)
                for sid in sessions
            }

        open_calls = await self.store.read(needed)
        removed: list[str] = []
        for session_id, calls in by_session.items():
            waiting = open_calls.get(session_id)
            for call_id, state in calls.items():
                if waiting is not None and _kept(call_id, state, waiting, cutoff):
                    continue
                if await self.host.remove_job(state.key):
                    removed.append(state.key)
        if removed:
            _log.info("removed %d finished job terminal(s)", len(removed))
        return removed

    async def _owed(self) -> set[str]:
        """Keys of jobs something still needs: an owed notice, or a registry job of this
        process that has not settled."""
        keys = {
            m.recovery.job_key
            for m in await self.jobs.pending_background()
            if isinstance(m.recovery, ShellRecovery)
        }
        for info in self.jobs.jobs():
            if info.type == "shell" and info.status == "running":
                keys.add(str(info.metadata.get("job_key", info.id)))
        return keys

    # ----- deleted sessions ----------------------------------------------------------------

    async def sessions_deleted(self, session_ids: Iterable[str]) -> None:
        """A deleted session tree: every job of every session in it is stopped and removed.
        A host that cannot be reached keeps them until the next sweep (finished ones) or
        its own exit (running ones)."""
        if self.host is None:
            return
        for session_id in session_ids:
            try:
                await self.host.remove_session_jobs(session_id)
            except _UNREACHABLE:
                _log.info("jobs of deleted session %s left to the sweep", session_id)


def _kept(call_id: str, state: JobState, waiting: set[str], cutoff: float) -> bool:
    """A finished job of a live session stays while its call is open or it is young."""
    return call_id in waiting or state.ended is None or state.ended > cutoff
