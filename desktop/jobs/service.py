"""Background work in the running service: one object the app, the shell tool and the
routes share.

- `shell_backgrounded` (the shell tool's `on_background`): a `background: true` call's job
  becomes a registry job with a durable marker; when the PTY host job ends its notice is
  admitted (waking the session, so the model reads the result).
- `shell_foreground` / `subagent_foreground` (the tools' `on_foreground`): a foreground
  call's wait is a registry job its turn blocks on, so `background_session`
  (`POST /api/session/{id}/background`) can move it: the marker is written, the call
  returns "moved", and the completion becomes the notice.
- `jobs_of` / `cancel`: what `GET /api/session/{id}/jobs` and
  `POST /api/session/{id}/jobs/{job_id}/cancel` answer.
- `recovery`: the start-up sweep (recovery.py), given to the runner's `recover`.
- `cleanup`: finished job terminals removed after their retention or with their session
  (cleanup.py); its timer is started after recovery.
- `close`: service shutdown; runs are cancelled without settling, markers stay.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from desktop.events.bus import DurableBus
from desktop.events.errors import SessionError
from desktop.jobs import notices
from desktop.jobs.cleanup import CleanupHost, JobCleanup
from desktop.jobs.markers import (
    Marker,
    MarkerStore,
    ShellRecovery,
    SubagentRecovery,
)
from desktop.jobs.records import RecordStore
from desktop.jobs.recovery import (
    BackgroundRecovery,
    Runner,
    ShellHost,
    shell_result_notice,
)
from desktop.jobs.registry import JobInfo, JobRegistry
from desktop.jobs.tasks import OwnedTasks
from desktop.tools.shell import JobResult, JobState, ShellContext, result_text

_log = logging.getLogger("desk.session.background")


class HostWithKill(ShellHost, Protocol):
    async def kill_job(self, key: str) -> JobState: ...


def job_not_found(session_id: str, job_id: str) -> SessionError:
    return SessionError(404, "job.not_found", f"No job {job_id!r} in session {session_id!r}.")


def job_json(info: JobInfo) -> dict[str, Any]:
    """The API's job shape."""
    out: dict[str, Any] = {
        "id": info.id,
        "type": info.type,
        "title": info.title,
        "status": info.status,
        "background": info.background,
        "time": {"started": info.started_at, "completed": info.completed_at},
        "notification_id": info.notification_id,
    }
    for key in ("call_id", "job_key", "terminal_id", "child_id"):
        if key in info.metadata:
            out[key] = info.metadata[key]
    if info.error is not None:
        out["error"] = info.error
    return out


def _started(job: dict[str, Any]) -> float:
    """Sort key: start time, unknown (a marker's job) last."""
    started = job["time"].get("started")
    return float(started) if isinstance(started, int | float) else float("inf")


def marker_json(marker: Marker) -> dict[str, Any]:
    """A job known only by its marker (its notice is still owed)."""
    r = marker.recovery
    return {
        "id": marker.id,
        "type": r.kind,
        "title": r.command if isinstance(r, ShellRecovery) else r.description,
        "status": marker.status,
        "background": True,
        "time": {"started": None, "completed": None},
        "notification_id": marker.notification_id,
    }


class BackgroundWork:
    def __init__(
        self,
        bus: DurableBus,
        runner: Runner,
        host: HostWithKill | None,
        *,
        cleanup_host: CleanupHost | None = None,
        retention: float = 24 * 3600.0,
    ) -> None:
        self.bus = bus
        self.runner = runner
        self.host = host
        self.jobs = JobRegistry(MarkerStore(bus.store), on_change=self._job_changed)
        self.records = RecordStore(bus.store)
        self.recovery = BackgroundRecovery(bus, self.jobs, runner, host=host)
        self.cleanup = JobCleanup(
            bus, self.jobs, cleanup_host, retention=retention, records=self.records
        )
        self._tasks = OwnedTasks(_log, "a background notice failed")

    def _job_changed(self, info: JobInfo) -> None:
        """Every change of a session's job reaches the page as `session.job.updated`; a
        settled job's is also recorded, so the list shows it after a restart (records.py)."""
        session_id = info.metadata.get("session_id")
        if isinstance(session_id, str):
            job = job_json(info)
            self.bus.broadcast(session_id, "session.job.updated", {"job": job})
            if info.status != "running":
                self._spawn(self.records.put(session_id, job))

    def _spawn(self, work: Awaitable[None]) -> None:
        self._tasks.spawn(work)

    async def close(self) -> None:
        await self.cleanup.close()
        await self._tasks.close()
        await self.recovery.close()
        await self.jobs.close()

    # ----- the shell tool ------------------------------------------------------------------

    async def shell_backgrounded(self, ctx: ShellContext, state: JobState, command: str) -> None:
        existing = self.jobs.get(state.key)
        if existing is not None and existing.status == "running":
            return  # the call ran again (adopted on resume): it already owns its marker
        results = await self._start_shell(ctx, state, command)
        moved = await self.jobs.background(state.key)
        assert moved is not None
        assert moved.notification_id is not None
        self._spawn(self._notify_shell(state.key, results))

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
        self._spawn(self._notify_shell(state.key, results))
        return True

    async def background_session(self, session_id: str) -> list[dict[str, Any]]:
        """`POST /api/session/{id}/background`: every call the session's turn is waiting
        for goes to the background (markers first); the moved jobs."""
        return [job_json(i) for i in await self.jobs.background_all(session_id)]

    async def _start_shell(
        self, ctx: ShellContext, state: JobState, command: str
    ) -> dict[str, JobResult]:
        host = self.host
        assert host is not None
        recovery = ShellRecovery(ctx.session_id, ctx.call_id, state.key, command)
        results: dict[str, JobResult] = {}

        async def wait() -> str:
            final = await host.wait_job(state.key)
            if final.status == "gone":
                raise RuntimeError(notices.SERVER_RESTARTED)
            results["result"] = result = await host.job_result(state.key)
            return result_text(result, None)

        await self.jobs.start(
            job_id=state.key,
            kind="shell",
            run=wait,
            title=command,
            metadata={
                "session_id": ctx.session_id,
                "call_id": ctx.call_id,
                "job_key": state.key,
                "terminal_id": state.terminal_id,
            },
            recovery=recovery,
        )
        return results

    async def _notify_shell(self, job_id: str, results: dict[str, JobResult]) -> None:
        info = await self.jobs.wait(job_id)
        if info is None or info.status == "running" or info.recovery is None:
            return  # shutdown: the marker stays for the successor
        assert info.notification_id is not None
        marker = Marker(
            info.id, info.notification_id, info.recovery, info.status, info.output, info.error
        )
        if info.status == "completed" and "result" in results:
            notice = shell_result_notice(marker, results["result"])
        else:
            notice = notices.stored_shell_notice(marker)
        await notices.admit(self.bus, notice, wake=self.runner.wake)

    # ----- subagents --------------------------------------------------------------------

    async def subagent_backgrounded(self, ctx: ShellContext, child: str, description: str) -> None:
        await self._start_subagent(ctx, child, description, lambda: self.recovery.run_child(child))
        await self.jobs.background(child)
        self._spawn(self._notify_subagent(child))

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
        self._spawn(self._notify_subagent(child))
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
        info = await self.jobs.wait(child)
        if info is None or info.status == "running" or info.recovery is None:
            return
        assert info.notification_id is not None
        marker = Marker(
            info.id, info.notification_id, info.recovery, info.status, info.output, info.error
        )
        state: notices.State = info.status
        await notices.admit(self.bus, notices.subagent_notice(marker, state), wake=self.runner.wake)

    async def interrupted(self, session_id: str) -> None:
        """A user interrupt of `session_id`: its own job (it is a background child) is
        cancelled for good, and so are its background children, whose turns end."""
        await self.jobs.cancel(session_id)
        for info in self.jobs.jobs(session_id):
            if info.type == "subagent" and info.status == "running":
                await self.runner.interrupt(str(info.metadata.get("child_id", info.id)))
                await self.jobs.cancel(info.id)

    # ----- the routes ------------------------------------------------------------------------

    async def jobs_of(self, session_id: str) -> list[dict[str, Any]]:
        """This process's jobs of the session, then the settled ones of earlier processes
        (records), then work known only by its marker; oldest first."""
        listed = [job_json(i) for i in self.jobs.jobs(session_id)]
        known = {j["id"] for j in listed}
        for job in await self.records.of_session(session_id):
            if job["id"] not in known:
                listed.append(job)
                known.add(job["id"])
        for marker in await self.jobs.pending_background():
            if marker.recovery.session == session_id and marker.id not in known:
                listed.append(marker_json(marker))
        return sorted(listed, key=_started)

    async def cancel(self, session_id: str, job_id: str) -> dict[str, Any]:
        info = self.jobs.get(job_id)
        if info is None or info.metadata.get("session_id") != session_id:
            recorded = await self.records.get(session_id, job_id)
            if recorded is not None:
                return recorded  # settled in an earlier process: answered as it is
            raise job_not_found(session_id, job_id)
        if info.type == "shell" and info.status == "running" and self.host is not None:
            # Kill the command first, so "cancelled" is what really happened to it.
            key = str(info.metadata.get("job_key", job_id))
            await self.host.kill_job(key)
        if info.type == "subagent" and info.status == "running":
            # The child's turn ends for good (its interrupt hook cancels this job too).
            await self.runner.interrupt(str(info.metadata.get("child_id", job_id)))
        # Its notifier (spawned when it was backgrounded) admits the "cancelled" notice.
        cancelled = await self.jobs.cancel(job_id)
        assert cancelled is not None
        return job_json(cancelled)
