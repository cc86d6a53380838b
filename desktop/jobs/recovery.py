"""Restart recovery of background work, at service start before new work is served.

    report = await BackgroundRecovery(bus, jobs, runner, host=shell_jobs).recover()

Every rule of the seed's resumeSuspendedSessions, plus adoption of PTY host jobs:

1. Claims of child sessions are released, except those of children a `running` subagent
   marker will resume.
2. Each marker whose job this process does not run:
   - shell: the PTY host is asked for its job. Still running: adopted (a job of the
     registry waits for it; its real result is noticed, waking the session). Finished: its
     real result is admitted. Gone (the host died with it): the stored outcome is admitted,
     "Command cancelled because the server restarted" for a marker left `running`. Neither
     of the last two wakes an idle session.
   - subagent: a child or parent that is gone (or not that parent's child) acknowledges the
     marker; a stored result is delivered without re-running; a running child is resumed
     within its budget (counted durably before the resume) and its answer noticed when done,
     or, over budget, terminalized and its parent told so.
   Notices to a parent whose own claim is about to be resumed do not wake it: the root
   sweep resumes it (or exhausts its budget) and it reads them at its next step.
3. Suspended root sessions are resumed within the budget (the same durable count;
   over budget: `session.resume.exhausted`, which releases the claim): the runner's
   `recover_claims`, told which child claims to keep.

Recovery is at-least-once for side effects (a resumed child may redo work) and exactly-once
for notices (notices.py).
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from desktop.agent.recovery import RESUME_BUDGET, recover_claims
from desktop.events.bus import DurableBus, draft
from desktop.jobs import notices
from desktop.jobs.markers import Marker, ShellRecovery, SubagentRecovery
from desktop.jobs.notices import Notice
from desktop.jobs.registry import JobInfo, JobRegistry
from desktop.jobs.tasks import OwnedTasks
from desktop.store import sessions as q
from desktop.tools.shell import JobResult, JobState, result_text

_log = logging.getLogger("desk.session.background.recovery")

SWEEP_CONCURRENCY = 256  # shell markers recovered at once (bus requests in flight)

RESUME_EXHAUSTED = {
    "type": "session.resume_exhausted",
    "message": "The session was interrupted by too many restarts and will not be resumed "
    "automatically.",
}


class Runner(Protocol):
    """What recovery needs of the runner (desktop.agent.runner.SessionRunner)."""

    def active(self) -> set[str]: ...
    def wake(self, session_id: str) -> None: ...
    def resume(self, session_id: str) -> None: ...
    async def wait_idle(self, session_id: str) -> None: ...
    async def interrupt(self, session_id: str) -> bool: ...


class ShellHost(Protocol):
    """What recovery needs of the PTY host's jobs (desktop.jobs.host.ShellJobs)."""

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
    acknowledged: list[str] = field(default_factory=list)  # markers of sessions gone


def shell_result_notice(marker: Marker, result: JobResult) -> Notice:
    state: notices.State = "completed" if result.exit_code == 0 else "error"
    meta: dict[str, object] = {"exit_code": result.exit_code, "truncated": result.truncated}
    if result.reason is not None:
        meta["reason"] = result.reason
    return notices.shell_notice(marker, state, result_text(result, None), metadata=meta)


class BackgroundRecovery:
    def __init__(
        self,
        bus: DurableBus,
        jobs: JobRegistry,
        runner: Runner,
        *,
        host: ShellHost | None = None,
        budget: int = RESUME_BUDGET,
    ) -> None:
        self.bus = bus
        self.store = bus.store
        self.jobs = jobs
        self.runner = runner
        self.host = host
        self.budget = budget
        # Parents whose own resume is still to come: notices to them must not wake them.
        self._suspended: set[str] = set()
        self._tasks = OwnedTasks(_log, "background recovery task failed")

    async def _read(self, fn: Callable[[sqlite3.Connection], object]) -> object:
        return await self.store.run(lambda: fn(self.store.connection()))

    def _spawn(self, work: Awaitable[None]) -> None:
        self._tasks.spawn(work)

    async def close(self) -> None:
        await self._tasks.close()

    async def _admit(self, notice: Notice, report: Report | None, *, wake: bool) -> None:
        woken = self.runner.wake if wake and notice.session_id not in self._suspended else None
        outcome = await notices.admit(self.bus, notice, wake=woken)
        if report is not None:
            (report.admitted if outcome == "admitted" else report.acknowledged).append(
                notice.message_id
            )

    # ----- the sweep -----------------------------------------------------------------------

    async def recover(self) -> Report:
        report = Report()
        active = self.runner.active()
        pending = await self.jobs.pending_background()
        keep = [
            m.recovery.child_id
            for m in pending
            if m.status == "running" and isinstance(m.recovery, SubagentRecovery)
        ]

        def claims(conn: sqlite3.Connection) -> list[str]:
            q.release_child_claims(conn, keep)
            return q.list_suspended(conn)

        suspended = await self._read(claims)
        assert isinstance(suspended, list)
        self._suspended = {s for s in suspended if s not in active}
        mine = [m for m in pending if not self._runs_here(m)]
        shells = [m for m in mine if isinstance(m.recovery, ShellRecovery)]
        # One question to the host for all jobs, and the notices admitted concurrently: the
        # bus commits concurrent requests in shared transactions (a thousand markers cost a
        # handful of commits, not a thousand).
        states = await self._host_jobs() if shells else {}
        gate = asyncio.Semaphore(SWEEP_CONCURRENCY)

        async def shell(marker: Marker) -> None:
            assert isinstance(marker.recovery, ShellRecovery)
            async with gate:
                await self._shell(marker, marker.recovery, states, report)

        await asyncio.gather(*(shell(m) for m in shells))
        for marker in mine:
            if isinstance(marker.recovery, SubagentRecovery):
                await self._subagent(marker, marker.recovery, report)
        # Background completions may have woken parents: look at local turns only now.
        await self._resume_roots(report, keep)
        self._suspended.clear()
        return report

    async def _count_resume(self, session_id: str) -> bool:
        """Count one more resume durably, before it runs; False (and the session
        terminalized, its claim released) over the budget, or when it is gone."""
        attempts = await self._read(lambda c: q.count_resume(c, session_id))
        if attempts is None:
            return False
        assert isinstance(attempts, int)
        if attempts > self.budget:
            await self.bus.publish(
                draft(session_id, "session.resume.exhausted", {"error": RESUME_EXHAUSTED})
            )
            return False
        return True

    async def _resume_roots(self, report: Report, keep: list[str]) -> None:
        # The root sweep is the runner's recovery (one owner of the root budget rule).
        report.resumed = await recover_claims(
            self.bus, self.runner, budget=self.budget, keep_children=keep
        )

    # ----- shell -------------------------------------------------------------------------

    def _runs_here(self, marker: Marker) -> bool:
        local = self.jobs.get(marker.id)
        return local is not None and local.status == "running"  # its own notifier delivers

    async def _host_jobs(self) -> dict[str, JobState]:
        if self.host is None:
            return {}
        try:
            return {state.key: state for state in await self.host.list_jobs()}
        except Exception:  # the host cannot be reached: its jobs are as good as gone
            _log.warning("PTY host unreachable while recovering jobs", exc_info=True)
            return {}

    async def _shell(
        self, marker: Marker, r: ShellRecovery, states: dict[str, JobState], report: Report
    ) -> None:
        state = states.get(r.job_key) if marker.status == "running" else None
        if state is not None and state.status == "running" and self.host is not None:
            await self._adopt(marker, r, self.host)
            report.adopted.append(marker.id)
            return
        if state is not None and state.status == "exited" and self.host is not None:
            result = await self.host.job_result(r.job_key)
            if result.status == "exited":
                await self._admit(shell_result_notice(marker, result), report, wake=False)
                return
        await self._admit(notices.stored_shell_notice(marker), report, wake=False)

    async def _adopt(self, marker: Marker, r: ShellRecovery, host: ShellHost) -> None:
        results: dict[str, JobResult] = {}

        async def wait() -> str:
            final = await host.wait_job(r.job_key)
            if final.status == "gone":
                raise RuntimeError(notices.SERVER_RESTARTED)
            result = await host.job_result(r.job_key)
            results["result"] = result
            return result_text(result, None)

        await self.jobs.start(
            job_id=marker.id,
            kind="shell",
            run=wait,
            title=r.command,
            metadata={"session_id": r.session_id, "call_id": r.call_id, "job_key": r.job_key},
            recovery=r,
            notification_id=marker.notification_id,
        )
        await self.jobs.background(marker.id)

        async def notify() -> None:
            info = await self.jobs.wait(marker.id)
            if info is None or info.status == "running":
                return  # shutting down: the marker stays for the next start
            if info.status == "completed" and "result" in results:
                notice = shell_result_notice(marker, results["result"])
            else:
                notice = notices.stored_shell_notice(_as_marker(marker, info))
            await self._admit(notice, None, wake=True)

        self._spawn(notify())

    # ----- subagent --------------------------------------------------------------------------

    async def _subagent(self, marker: Marker, r: SubagentRecovery, report: Report) -> None:
        def family(conn: sqlite3.Connection) -> bool:
            child = q.get_session(conn, r.child_id)
            return (
                child is not None
                and child["parent_id"] == r.parent_id
                and q.get_session(conn, r.parent_id) is not None
            )

        if not await self._read(family):
            await self.jobs.complete_background(marker.notification_id)
            report.acknowledged.append(marker.notification_id)
            return
        if marker.status != "running":
            notice = notices.subagent_notice(marker, _state(marker.status))
            await self._admit(notice, report, wake=True)
            return
        if r.child_id in self.runner.active():
            return
        if not await self._count_resume(r.child_id):
            report.exhausted.append(r.child_id)
            notice = notices.subagent_notice(marker, "error", RESUME_EXHAUSTED["message"])
            await self._admit(notice, report, wake=True)
            return
        await self.jobs.start(
            job_id=r.child_id,
            kind="subagent",
            run=lambda: self.run_child(r.child_id),
            title=r.description,
            metadata={"session_id": r.parent_id, "child_id": r.child_id},
            recovery=r,
            notification_id=marker.notification_id,
        )
        await self.jobs.background(r.child_id)
        report.resumed_children.append(r.child_id)

        async def notify() -> None:
            info = await self.jobs.wait(r.child_id)
            if info is None or info.status == "running":
                return
            settled = _as_marker(marker, info)
            await self._admit(
                notices.subagent_notice(settled, _state(info.status)), None, wake=True
            )

        self._spawn(notify())

    async def run_child(self, child_id: str) -> str:
        """Run (or join) the child's turn; its last answer."""
        self.runner.resume(child_id)
        return await self.child_answer(child_id)

    async def child_answer(self, child_id: str) -> str:
        """The child's last answer once its turn (already running, or none) is over."""
        await self.runner.wait_idle(child_id)
        text = await self._read(lambda c: _last_answer(c, child_id))
        assert isinstance(text, str)
        return text or notices.SUBAGENT_NO_TEXT


def _as_marker(marker: Marker, info: JobInfo) -> Marker:
    return Marker(
        marker.id, marker.notification_id, marker.recovery, info.status, info.output, info.error
    )


def _state(status: str) -> notices.State:
    return "completed" if status == "completed" else "error" if status == "error" else "cancelled"


def _last_answer(conn: sqlite3.Connection, session_id: str) -> str:
    """The text of the session's last completed, error-free assistant message."""
    for message in reversed(q.all_messages(conn, session_id)):
        if message.get("type") != "assistant" or "error" in message:
            continue
        if "completed" not in message.get("time", {}):
            continue
        return "".join(p["text"] for p in message.get("content", []) if p.get("type") == "text")
    return ""
