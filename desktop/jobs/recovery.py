"""Restart recovery: what a new service does, before it serves, with the work a previous
process left behind, in phases named in the order they run (`RestartRecovery.recover`).
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from desktop.events.bus import DurableBus, draft
from desktop.jobs import notices
from desktop.jobs.model import Job, ShellRecovery, SubagentRecovery
from desktop.jobs.notices import Notice
from desktop.jobs.registry import JobRegistry
from desktop.jobs.tasks import OwnedTasks
from desktop.store import sessions as q
from desktop.tools.shell import JobResult, JobState, result_text

_log = logging.getLogger("desk.jobs.recovery")

RESUME_BUDGET = 10
SWEEP_CONCURRENCY = 256  # shell jobs recovered at once (bus requests in flight)

RESUME_EXHAUSTED = {
    "type": "session.resume_exhausted",
    "message": "The session was interrupted by too many restarts and will not be resumed "
    "automatically.",
}


class Turns(Protocol):
    """What background work needs of the session runner (desktop.agent.runner)."""

    def active(self) -> set[str]: ...
    def wake(self, session_id: str) -> None: ...
    def resume(self, session_id: str) -> None: ...
    async def wait_idle(self, session_id: str) -> None: ...
    async def interrupt(self, session_id: str) -> bool: ...


class ShellHost(Protocol):
    """What background work needs of the PTY host's jobs (desktop.jobs.host.ShellJobs)."""

    async def get_job(self, key: str) -> JobState: ...
    async def wait_job(self, key: str, *, within: float | None = None) -> JobState: ...
    async def job_result(self, key: str, *, collect: bool = True) -> JobResult: ...
    async def list_jobs(self, session_id: str | None = None) -> list[JobState]: ...


@dataclass
class Report:
    admitted: list[str] = field(default_factory=list)  # notification ids noticed now
    adopted: list[str] = field(default_factory=list)  # job ids waited for in the background
    resumed_children: list[str] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)  # root sessions handed to the runner
    exhausted: list[str] = field(default_factory=list)  # children over their budget
    acknowledged: list[str] = field(default_factory=list)  # notices of sessions gone


def shell_waiter(
    host: ShellHost, key: str, results: dict[str, JobResult]
) -> Callable[[], Awaitable[str]]:
    """A registry run that waits for the PTY host job `key`; its result lands in `results`."""

    async def wait() -> str:
        final = await host.wait_job(key)
        if final.status == "gone":
            raise RuntimeError(notices.SERVER_RESTARTED)
        results["result"] = result = await host.job_result(key)
        return result_text(result, None)

    return wait


class RestartRecovery:
    """Restart recovery's phases, run in order by `recover`: `release_child_claims`,
    `end_unowned`, `recover_shells`, `recover_subagents`, `resume_roots` (what each does:
    docs/ARCHITECTURE.md, "Restart", and docs/INTERNALS.md).
    """

    def __init__(
        self,
        bus: DurableBus,
        jobs: JobRegistry,
        turns: Turns,
        *,
        host: ShellHost | None = None,
        budget: int = RESUME_BUDGET,
    ) -> None:
        self.bus = bus
        self.store = bus.store
        self.jobs = jobs
        self.turns = turns
        self.host = host
        self.budget = budget
        # Parents whose own resume is still to come: notices to them must not wake them.
        self._suspended: set[str] = set()
        self._tasks = OwnedTasks(_log, "background recovery task failed")

    async def close(self) -> None:
        await self._tasks.close()

    async def _admit(
        self, notice: Notice, report: Report | None, *, wake: bool, job: Job | None = None
    ) -> None:
        """Admit a job's notice; `job`, a row an earlier process left running, ends with it."""
        woken = self.turns.wake if wake and notice.session_id not in self._suspended else None
        outcome = await notices.admit(self.bus, notice, wake=woken, settles=job)
        if report is not None:
            (report.admitted if outcome == "admitted" else report.acknowledged).append(
                notice.message_id
            )

    async def recover(self) -> Report:
        """The phases, in order."""
        report = Report()
        pending = await self.jobs.pending_background()
        keep = await self.release_child_claims(pending)
        owed = [j for j in pending if not self._runs_here(j)]
        await self.end_unowned()
        await self.recover_shells(owed, report)
        await self.recover_subagents(owed, report)
        # Background completions may have woken parents: look at local turns only now.
        report.resumed = await self.resume_roots(keep)
        self._suspended.clear()
        return report

    def _runs_here(self, job: Job) -> bool:
        local = self.jobs.get(job.id)
        return local is not None and local.status == "running"  # its own notifier delivers

    # ----- 1. child claims ---------------------------------------------------------------

    async def release_child_claims(self, owed: Sequence[Job]) -> list[str]:
        """Release child claims but those of running background children; those kept."""
        keep = [
            j.recovery.child_id
            for j in owed
            if j.status == "running" and isinstance(j.recovery, SubagentRecovery)
        ]

        def claims(conn: sqlite3.Connection) -> list[str]:
            q.release_child_claims(conn, keep)
            return q.list_suspended(conn)

        active = self.turns.active()
        self._suspended = {s for s in await self.store.read(claims) if s not in active}
        return keep

    # ----- 2. jobs nobody runs --------------------------------------------------------------

    async def end_unowned(self) -> None:
        left = [j for j in await self.jobs.store.unfinished() if self.jobs.get(j.id) is None]
        await self.jobs.store.put([j.settled("cancelled", None, None) for j in left])

    # ----- 3. shell ------------------------------------------------------------------------

    async def recover_shells(self, owed: Sequence[Job], report: Report) -> None:
        shells = [j for j in owed if isinstance(j.recovery, ShellRecovery)]
        if not shells:
            return
        # One question to the host for all jobs, and the notices admitted concurrently: the
        # bus commits concurrent requests in shared transactions (a thousand jobs cost a
        # handful of commits, not a thousand).
        states = await self._host_jobs()
        gate = asyncio.Semaphore(SWEEP_CONCURRENCY)

        async def shell(job: Job) -> None:
            async with gate:
                await self._shell(job, states, report)

        await asyncio.gather(*(shell(j) for j in shells))

    async def _host_jobs(self) -> dict[str, JobState]:
        if self.host is None:
            return {}
        try:
            return {state.key: state for state in await self.host.list_jobs()}
        except Exception:  # the host cannot be reached: its jobs are as good as gone
            _log.warning("PTY host unreachable while recovering jobs", exc_info=True)
            return {}

    async def _shell(self, job: Job, states: dict[str, JobState], report: Report) -> None:
        r = job.recovery
        assert isinstance(r, ShellRecovery)
        state = states.get(r.job_key) if job.status == "running" else None
        if state is not None and state.status == "running" and self.host is not None:
            await self._adopt(job, r, self.host)
            report.adopted.append(job.id)
            return
        if state is not None and state.status == "exited" and self.host is not None:
            result = await self.host.job_result(r.job_key)
            if result.status == "exited":
                notice = notices.shell_result_notice(job, result)
                await self._admit(notice, report, wake=False, job=job)
                return
        await self._admit(notices.stored_shell_notice(job), report, wake=False, job=job)

    async def _adopt(self, job: Job, r: ShellRecovery, host: ShellHost) -> None:
        results: dict[str, JobResult] = {}
        await self.jobs.start(
            job_id=job.id,
            kind="shell",
            run=shell_waiter(host, r.job_key, results),
            title=r.command,
            metadata={**job.metadata, "session_id": r.session_id},
            recovery=r,
            notification_id=job.notification_id,
        )
        await self.jobs.background(job.id)

        async def notify() -> None:
            info = await self.jobs.wait(job.id)
            if info is None or info.status == "running":
                return  # shutting down: the row stays owed for the next start
            notice = notices.settled_shell_notice(info, results.get("result"))
            await self._admit(notice, None, wake=True)

        self._tasks.spawn(notify())

    # ----- 4. subagents ----------------------------------------------------------------------

    async def recover_subagents(self, owed: Sequence[Job], report: Report) -> None:
        for job in owed:
            if isinstance(job.recovery, SubagentRecovery):
                await self._subagent(job, job.recovery, report)

    async def _subagent(self, job: Job, r: SubagentRecovery, report: Report) -> None:
        def family(conn: sqlite3.Connection) -> bool:
            child = q.get_session(conn, r.child_id)
            return (
                child is not None
                and child["parent_id"] == r.parent_id
                and q.get_session(conn, r.parent_id) is not None
            )

        assert job.notification_id is not None
        if not await self.store.read(family):
            await self.jobs.complete_background(job.notification_id)
            report.acknowledged.append(job.notification_id)
            return
        if job.status != "running":
            notice = notices.subagent_notice(job, notices.subagent_state(job.status))
            await self._admit(notice, report, wake=True)
            return
        if r.child_id in self.turns.active():
            return
        if not await self._count_resume(r.child_id):
            report.exhausted.append(r.child_id)
            notice = notices.subagent_notice(job, "error", RESUME_EXHAUSTED["message"])
            await self._admit(notice, report, wake=True, job=job)
            return
        await self.jobs.start(
            job_id=r.child_id,
            kind="subagent",
            run=lambda: self.run_child(r.child_id),
            title=r.description,
            metadata={"session_id": r.parent_id, "child_id": r.child_id},
            recovery=r,
            notification_id=job.notification_id,
        )
        await self.jobs.background(r.child_id)
        report.resumed_children.append(r.child_id)

        async def notify() -> None:
            info = await self.jobs.wait(r.child_id)
            if info is None or info.status == "running":
                return
            state = notices.subagent_state(info.status)
            await self._admit(notices.subagent_notice(info, state), None, wake=True)

        self._tasks.spawn(notify())

    async def _count_resume(self, session_id: str) -> bool:
        """Count one more resume durably, before it runs; False (and the session
        terminalized, its claim released) over the budget, or when it is gone."""
        attempts = await self.store.read(lambda c: q.count_resume(c, session_id))
        if attempts is None:
            return False
        if attempts > self.budget:
            await self.bus.publish(
                draft(session_id, "session.resume.exhausted", {"error": RESUME_EXHAUSTED})
            )
            return False
        return True

    async def run_child(self, child_id: str) -> str:
        """Run (or join) the child's turn; its last answer."""
        self.turns.resume(child_id)
        return await self.child_answer(child_id)

    async def child_answer(self, child_id: str) -> str:
        """The child's last answer once its turn (already running, or none) is over."""
        await self.turns.wait_idle(child_id)
        text = await self.store.read(lambda c: _last_answer(c, child_id))
        return text or notices.SUBAGENT_NO_TEXT

    # ----- 5. root sessions -------------------------------------------------------------------

    async def resume_roots(self, keep_children: Sequence[str] = ()) -> list[str]:
        """Root claims, each counted durably before its resume; child claims are released
        except `keep_children`. Sessions already running here are not resumed again."""
        active = self.turns.active()

        def claimed(conn: sqlite3.Connection) -> list[tuple[str, int | None]]:
            q.release_child_claims(conn, list(keep_children))
            return [
                (sid, q.count_resume(conn, sid))
                for sid in q.list_suspended(conn)
                if sid not in active
            ]

        resumed: list[str] = []
        for session_id, attempts in await self.store.read(claimed):
            if attempts is None:
                continue
            if attempts > self.budget:
                _log.warning("session %s was resumed %d times; giving up", session_id, attempts - 1)
                error = {
                    "type": "session.resume_exhausted",
                    "message": f"The turn was resumed after {self.budget} restarts and is stopped.",
                }
                await self.bus.publish(
                    draft(session_id, "session.resume.exhausted", {"error": error})
                )
                continue
            self.turns.resume(session_id)
            resumed.append(session_id)
        return resumed


def _last_answer(conn: sqlite3.Connection, session_id: str) -> str:
    """The text of the session's last completed, error-free assistant message."""
    for message in reversed(q.all_messages(conn, session_id)):
        if message.get("type") != "assistant" or "error" in message:
            continue
        if "completed" not in message.get("time", {}):
            continue
        return "".join(p["text"] for p in message.get("content", []) if p.get("type") == "text")
    return ""
