"""The job registry: this process's work that a turn may wait for, hand to the background,
or cancel, with each change written to the job's row before anyone is told.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from desktop.events.ids import derived_id, new_id
from desktop.jobs.model import Job, JobStore, Recovery, Status
from desktop.store.log import now_ms

_log = logging.getLogger("desk.jobs.registry")

Run = Callable[[], Awaitable[str]]
# Told of every change of a job (started, backgrounded, settled, cancelled), after it is
# durable; it must not block (the service broadcasts an ephemeral event for the UI).
Changed = Callable[[Job], None]


@dataclass(frozen=True, slots=True)
class Blocked:
    """How a `block` ended: the job settled, or it was moved to the background."""

    kind: Literal["settled", "backgrounded"]
    info: Job


@dataclass(eq=False)
class _Job:
    info: Job
    token: object
    done: asyncio.Future[Job]
    backgrounded: asyncio.Future[Job]
    blocking: Counter[str] = field(default_factory=Counter)
    task: asyncio.Task[None] | None = None


def _error_text(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


class JobRegistry:
    """This process's jobs:

        job = await jobs.start(kind="shell", run=run_command, recovery=ShellRecovery(...))
        outcome = await jobs.block(job.id, session_id)  # "settled" | "backgrounded"
        await jobs.background(job.id)  # or: background_all(session_id)
        info = await jobs.wait(job.id)  # settled (or closed: still "running")

    Each run is an asyncio task this registry owns; its row (model.py) is written at every
    change, before anyone is told. How a run settles: docs/INTERNALS.md.
    """

    def __init__(self, store: JobStore, on_change: Changed | None = None) -> None:
        self.store = store
        self.on_change = on_change
        self._jobs: dict[str, _Job] = {}
        self._lock = asyncio.Lock()
        self._closed = False

    def _changed(self, info: Job) -> None:
        if self.on_change is None:
            return
        try:
            self.on_change(info)
        except Exception:
            _log.exception("a job change listener failed for %s", info.id)

    # ----- reading ------------------------------------------------------------------------

    def get(self, job_id: str) -> Job | None:
        job = self._jobs.get(job_id)
        return None if job is None else job.info

    def jobs(self, session_id: str | None = None) -> list[Job]:
        """Jobs known to this process, oldest first; with `session_id`, those whose
        metadata names it (every job the session layer starts does)."""
        infos = [j.info for j in self._jobs.values()]
        if session_id is not None:
            infos = [i for i in infos if i.metadata.get("session_id") == session_id]
        return sorted(infos, key=lambda i: (i.started_at, i.id))

    async def pending_background(self) -> list[Job]:
        """Every job whose notice is owed (of this process and of earlier ones)."""
        return await self.store.owed()

    async def complete_background(self, notification_id: str) -> None:
        """Acknowledge a notice admitted elsewhere (or whose session is gone). The normal
        path acknowledges it inside the admitting transaction instead."""
        await self.store.acknowledge(notification_id)

    # ----- starting and settling ------------------------------------------------------------

    async def start(
        self,
        *,
        kind: str,
        run: Run,
        job_id: str | None = None,
        title: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        recovery: Recovery | None = None,
        notification_id: str | None = None,
    ) -> Job:
        """Start `run()` as job `job_id` (a new id by default). A job of that id still
        running is returned as it is: the same work never runs twice in one process."""
        if self._closed:
            raise RuntimeError("the job registry is closed")
        key = job_id or new_id("job")
        async with self._lock:
            existing = self._jobs.get(key)
            if existing is not None and existing.info.status == "running":
                return existing.info
            loop = asyncio.get_running_loop()
            info = Job(
                key,
                kind,
                "running",
                now_ms(),
                title=title,
                metadata=dict(metadata or {}),
                notification_id=notification_id,
                recovery=recovery,
            )
            await self.store.put([info])
            job = _Job(info, object(), loop.create_future(), loop.create_future())
            self._jobs[key] = job
            job.task = asyncio.create_task(self._drive(key, job.token, run), name=key)
        self._changed(info)
        return info

    async def _drive(self, job_id: str, token: object, run: Run) -> None:
        try:
            output = await run()
        except asyncio.CancelledError:
            await self._settle(job_id, token, "cancelled", None, None)
            raise
        except Exception as exc:
            await self._settle(job_id, token, "error", None, _error_text(exc))
        else:
            await self._settle(job_id, token, "completed", output, None)

    async def _settle(
        self, job_id: str, token: object, status: Status, output: str | None, error: str | None
    ) -> None:
        if self._closed:
            return  # shutdown: no settlement is promised, the rows stay as they are
        async with self._lock:
            job = self._jobs.get(job_id)
            if job is None or job.token is not token or job.info.status != "running":
                return
            settled = job.info.settled(status, output, error)
            # An interruption of owed work is not an outcome: its row keeps "running".
            if status != "cancelled" or not settled.owed:
                try:
                    await self.store.put([settled])
                except Exception:
                    _log.exception("could not record the result of job %s", job_id)
            job.info = settled
            job.blocking.clear()
        _resolve(job.done, settled)
        self._changed(settled)

    # ----- observing ------------------------------------------------------------------------

    async def wait(self, job_id: str, within: float | None = None) -> Job | None:
        """The job once settled (None: unknown). With `within`, at most that many seconds, then as
        it is. Cancelling the caller cancels only the wait."""
        job = self._jobs.get(job_id)
        if job is None:
            return None
        if job.info.status != "running":
            return job.info
        with contextlib.suppress(TimeoutError):
            return await asyncio.wait_for(asyncio.shield(job.done), within)
        return job.info

    async def block(self, job_id: str, session_id: str) -> Blocked | None:
        """Wait as `session_id`'s turn: until the job settles or is moved to the background
        (by `background`, or `background_all` for this session). None: unknown job."""
        job = self._jobs.get(job_id)
        if job is None:
            return None
        if job.info.status != "running":
            return Blocked("settled", job.info)
        if job.info.background:
            return Blocked("backgrounded", job.info)
        job.blocking[session_id] += 1
        try:
            # asyncio.wait never cancels what it waits on: the futures outlive this call.
            await asyncio.wait([job.done, job.backgrounded], return_when=asyncio.FIRST_COMPLETED)
        finally:
            job.blocking[session_id] -= 1
            if job.blocking[session_id] <= 0:
                del job.blocking[session_id]
        if job.backgrounded.done() and not job.done.done():
            return Blocked("backgrounded", job.backgrounded.result())
        return Blocked("settled", job.done.result())

    # ----- handing over -----------------------------------------------------------------

    def _mark(self, job: _Job) -> Job:
        info = job.info
        notification_id = info.notification_id
        if info.recovery is not None and notification_id is None:
            # Derived from the job: a call that runs again after a restart (adopted while
            # its first notice was already delivered) gets the same notice id, which the
            # log refuses a second time. A random id here once delivered a notice twice.
            notification_id = derived_id("msg", f"notice:{info.id}")
        return dataclasses.replace(info, background=True, notification_id=notification_id)

    async def background(self, job_id: str) -> Job | None:
        """Move a job to the background: its blocked turns are released and, for
        recoverable work, its owed row is written first. Recoverable work that already
        settled is backgrounded too (its notice is still owed). None: nothing to move."""
        async with self._lock:
            job = self._jobs.get(job_id)
            if job is None or (job.info.status != "running" and job.info.recovery is None):
                return None
            if job.info.background:
                return job.info
            moved = self._mark(job)
            await self.store.put([moved])
            job.info = moved
            job.blocking.clear()
        _resolve(job.backgrounded, moved)
        self._changed(moved)
        return moved

    async def background_all(self, session_id: str, kind: str | None = None) -> list[Job]:
        """Background every running job `session_id`'s turn is blocked on (of `kind`, when
        given); their rows are written in one transaction before anyone is released."""
        async with self._lock:
            chosen = [
                job
                for job in self._jobs.values()
                if job.info.status == "running"
                and not job.info.background
                and (kind is None or job.info.type == kind)
                and job.blocking[session_id] > 0
            ]
            moved = [self._mark(job) for job in chosen]
            await self.store.put(moved)
            for job, info in zip(chosen, moved, strict=True):
                job.info = info
                job.blocking.clear()
        for job, info in zip(chosen, moved, strict=True):
            _resolve(job.backgrounded, info)
            self._changed(info)
        return moved

    async def cancel(self, job_id: str) -> Job | None:
        """Cancel a running job on purpose: "cancelled" is recorded (in its row) and
        its run is cancelled. A settled job is returned as it is; None: unknown."""
        async with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                return None
            if job.info.status != "running":
                return job.info
            cancelled = dataclasses.replace(job.info, status="cancelled", completed_at=now_ms())
            await self.store.put([cancelled])
            job.info = cancelled
            job.blocking.clear()
        _resolve(job.done, cancelled)
        self._changed(cancelled)
        task = job.task
        if task is not None and not task.done():
            task.cancel()
            if task is not asyncio.current_task():
                await asyncio.gather(task, return_exceptions=True)
        return cancelled

    async def close(self) -> None:
        """Cancel every run without settling it; waiters get the job as it was."""
        self._closed = True
        tasks = [j.task for j in self._jobs.values() if j.task is not None and not j.task.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for job in self._jobs.values():
            _resolve(job.done, job.info)


def _resolve(future: asyncio.Future[Job], info: Job) -> None:
    if not future.done():
        future.set_result(info)
