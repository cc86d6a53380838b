"""Background work in the running service: the one object the tools, the routes and the
app's lifecycle share, built on the registry, the rows, the PTY host, notices and cleanup.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol

from desktop.events.bus import DurableBus
from desktop.jobs import notices
from desktop.jobs.cleanup import CleanupHost, JobCleanup
from desktop.jobs.model import Job, JobStore, ShellRecovery, SubagentRecovery, job_not_found
from desktop.jobs.recovery import RestartRecovery, ShellHost, Turns, shell_waiter
from desktop.jobs.registry import JobRegistry
from desktop.jobs.tasks import OwnedTasks
from desktop.tools.shell import JobResult, JobState, ShellContext

_log = logging.getLogger("desk.jobs.service")


class HostWithKill(ShellHost, Protocol):
    async def kill_job(self, key: str) -> JobState: ...


class BackgroundWork:
    """- `shell_backgrounded` / `subagent_backgrounded` (the tools' `on_background`): the call's
      work becomes a registry job owing its notice; when it ends the notice is admitted
      (waking the session, so the model reads the result).
    - `shell_foreground` / `subagent_foreground` (the tools' `on_foreground`): a foreground
      call's wait is a registry job its turn blocks on, so `background_session`
      (`POST /api/session/{id}/background`) can move it: the call returns "moved", and the
      completion becomes the notice.
    - `jobs_of` / `cancel`: what `GET /api/session/{id}/jobs` and
      `POST /api/session/{id}/jobs/{job_id}/cancel` answer; the list is the session's rows.
    - `recovery` (recovery.py) runs at start-up, then `cleanup` (cleanup.py) starts its timer.
    - `close`: service shutdown; runs are cancelled without settling, owed rows stay.
    """

    def __init__(
        self,
        bus: DurableBus,
        turns: Turns,
        host: HostWithKill | None,
        *,
        cleanup_host: CleanupHost | None = None,
        retention: float = 24 * 3600.0,
    ) -> None:
        self.bus = bus
        self.turns = turns
        self.host = host
        self.jobs = JobRegistry(JobStore(bus.store), on_change=self._job_changed)
        self.recovery = RestartRecovery(bus, self.jobs, turns, host=host)
        self.cleanup = JobCleanup(bus, self.jobs, cleanup_host, retention=retention)
        self._tasks = OwnedTasks(_log, "a background notice failed")

    def _job_changed(self, job: Job) -> None:
        """Every change of a session's job reaches the page as `session.job.updated`."""
        if job.session_id:
            self.bus.broadcast(job.session_id, "session.job.updated", {"job": job.to_json()})

    async def close(self) -> None:
        await self.cleanup.close()
        await self._tasks.close()
        await self.recovery.close()
        await self.jobs.close()

    async def sessions_deleted(self, tree: Iterable[str]) -> None:
        """A deleted session tree: its job terminals go with it."""
        await self.cleanup.sessions_deleted(tree)

    # ----- the shell tool ------------------------------------------------------------------

    async def shell_backgrounded(self, ctx: ShellContext, state: JobState, command: str) -> None:
        existing = self.jobs.get(state.key)
        if existing is not None and existing.status == "running":
            return  # the call ran again (adopted on resume): it already owes its notice
        results = await self._start_shell(ctx, state, command)
        moved = await self.jobs.background(state.key)
        assert moved is not None
        self._tasks.spawn(self._notify_shell(state.key, results))

    async def shell_foreground(self, ctx: ShellContext, state: JobState, command: str) -> bool:
        """Wait for a foreground call's job as its turn (blocked), so `background_session`
        can move it; True when it was moved (its notice will follow)."""
        existing = self.jobs.get(state.key)
        if existing is None or existing.status != "running":
            results = await self._start_shell(ctx, state, command)
        else:
            results = {}
        outcome = await self.jobs.block(state.key, ctx.session_id)
        if outcome is None or outcome.kind != "backgrounded":
            return False
        self._tasks.spawn(self._notify_shell(state.key, results))
        return True

    async def background_session(self, session_id: str) -> list[dict[str, Any]]:
        """`POST /api/session/{id}/background`: every call the session's turn is waiting
        for goes to the background (rows first); the moved jobs."""
        return [job.to_json() for job in await self.jobs.background_all(session_id)]

    async def _start_shell(
        self, ctx: ShellContext, state: JobState, command: str
    ) -> dict[str, JobResult]:
        assert self.host is not None
        results: dict[str, JobResult] = {}
        await self.jobs.start(
            job_id=state.key,
            kind="shell",
            run=shell_waiter(self.host, state.key, results),
            title=command,
            metadata={
                "session_id": ctx.session_id,
                "call_id": ctx.call_id,
                "job_key": state.key,
                "terminal_id": state.terminal_id,
            },
            recovery=ShellRecovery(ctx.session_id, ctx.call_id, state.key, command),
        )
        return results

    async def _notify_shell(self, job_id: str, results: dict[str, JobResult]) -> None:
        job = await self.jobs.wait(job_id)
        if job is None or job.status == "running" or job.recovery is None:
            return  # shutdown: the row stays owed for the successor
        notice = notices.settled_shell_notice(job, results.get("result"))
        await notices.admit(self.bus, notice, wake=self.turns.wake)

    # ----- subagents --------------------------------------------------------------------

    async def subagent_backgrounded(self, ctx: ShellContext, child: str, description: str) -> None:
        await self._start_subagent(ctx, child, description, lambda: self.recovery.run_child(child))
        await self.jobs.background(child)
        self._tasks.spawn(self._notify_subagent(child))

    async def subagent_foreground(self, ctx: ShellContext, child: str, description: str) -> bool:
        """Wait for a foreground child as its parent's turn (blocked), so `background_session`
        can move it; True when it was moved (its answer becomes a notice). The child was
        already prompted and runs on its own: the job only waits for it to be idle."""
        await self._start_subagent(
            ctx, child, description, lambda: self.recovery.child_answer(child)
        )
        outcome = await self.jobs.block(child, ctx.session_id)
        if outcome is None or outcome.kind != "backgrounded":
            return False
        self._tasks.spawn(self._notify_subagent(child))
        return True

    async def _start_subagent(
        self, ctx: ShellContext, child: str, description: str, run: Callable[[], Awaitable[str]]
    ) -> None:
        await self.jobs.start(
            job_id=child,
            kind="subagent",
            run=run,
            title=description,
            metadata={"session_id": ctx.session_id, "child_id": child},
            recovery=SubagentRecovery(ctx.session_id, child, "subagent", description),
        )

    async def _notify_subagent(self, child: str) -> None:
        job = await self.jobs.wait(child)
        if job is None or job.status == "running" or job.recovery is None:
            return
        notice = notices.subagent_notice(job, notices.subagent_state(job.status))
        await notices.admit(self.bus, notice, wake=self.turns.wake)

    async def interrupted(self, session_id: str) -> None:
        """A user interrupt of `session_id`: its own job (it is a background child) is
        cancelled for good, and so are its background children, whose turns end."""
        await self.jobs.cancel(session_id)
        for job in self.jobs.jobs(session_id):
            if job.type == "subagent" and job.status == "running":
                await self.turns.interrupt(str(job.metadata.get("child_id", job.id)))
                await self.jobs.cancel(job.id)

    # ----- the routes ------------------------------------------------------------------------

    async def jobs_of(self, session_id: str) -> list[dict[str, Any]]:
        """The session's jobs, of this process and of earlier ones, oldest first."""
        return [job.to_json() for job in await self.jobs.store.of_session(session_id)]

    async def cancel(self, session_id: str, job_id: str) -> dict[str, Any]:
        job = self.jobs.get(job_id)
        if job is None or job.session_id != session_id:
            stored = await self.jobs.store.get(session_id, job_id)
            if stored is not None:
                return stored.to_json()  # ended in an earlier process: answered as it is
            raise job_not_found(session_id, job_id)
        if job.type == "shell" and job.status == "running" and self.host is not None:
            # Kill the command first, so "cancelled" is what really happened to it.
            await self.host.kill_job(str(job.metadata.get("job_key", job_id)))
        if job.type == "subagent" and job.status == "running":
            # The child's turn ends for good (its interrupt hook cancels this job too).
            await self.turns.interrupt(str(job.metadata.get("child_id", job_id)))
        # Its notifier (spawned when it was backgrounded) admits the "cancelled" notice.
        cancelled = await self.jobs.cancel(job_id)
        assert cancelled is not None
        return cancelled.to_json()
