"""A background command keeps running in the PTY host while the
service restarts, and the successor adopts it. Real PTY host, real processes, real SQLite;
the service's death is modelled by closing everything of it but the host."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from desktop.config import Settings
from desktop.jobs.host import ShellJobs
from desktop.jobs.model import JobStore, ShellRecovery
from desktop.jobs.notices import SERVER_RESTARTED
from desktop.jobs.recovery import RestartRecovery
from desktop.jobs.registry import JobRegistry
from desktop.jobs.service import BackgroundWork
from desktop.ptyhost.client import PtyHostClient
from desktop.tools.shell import ShellContext
from tests.support.fake_runner import FakeRunner
from tests.support.jobs import Stores, create_session, inbox, rows
from tests.support.wait import DEADLINE, wait_for

SID = "ses_adopt"


@pytest.fixture
async def shell_jobs(host: PtyHostClient, settings: Settings) -> AsyncIterator[ShellJobs]:
    runner = ShellJobs.for_settings(settings)
    yield runner
    await runner.close()


async def backgrounded(stores: Stores, shell_jobs: ShellJobs, command: str, cwd: Path) -> str:
    """A first service: the agent's background shell call; then that service dies (its
    registry and store close; the PTY host and the job stay)."""
    bus = await stores.open()
    await create_session(bus, SID)
    jobs = JobRegistry(JobStore(bus.store))
    state = await shell_jobs.start_job(SID, "call_a", command, str(cwd))

    async def wait() -> str:
        await shell_jobs.wait_job(state.key)
        return (await shell_jobs.job_result(state.key)).output

    await jobs.start(
        job_id=state.key,
        kind="shell",
        run=wait,
        recovery=ShellRecovery(SID, "call_a", state.key, command),
    )
    await jobs.background(state.key)
    await jobs.close()
    await stores.close(bus)
    return state.key


async def test_a_background_command_outliving_the_service_is_adopted_and_noticed_once(
    stores: Stores, shell_jobs: ShellJobs, tmp_path: Path
) -> None:
    gate = tmp_path / "go"
    command = f"while [ ! -e {gate} ]; do sleep 0.05; done; echo done-$((6*7))"
    key = await backgrounded(stores, shell_jobs, command, tmp_path)

    bus = await stores.open()
    jobs = JobRegistry(JobStore(bus.store))
    runner = FakeRunner(bus)
    recovery = RestartRecovery(bus, jobs, runner, host=shell_jobs)
    report = await recovery.recover()
    assert report.adopted == [key]
    assert report.admitted == []
    assert await inbox(bus, SID) == []  # still running: nothing to say yet
    await asyncio.to_thread(gate.touch)

    async def noticed() -> bool:
        return len(await inbox(bus, SID)) == 1 and not await jobs.pending_background()

    await wait_for(noticed, DEADLINE, "the adopted job's notice")
    (notice,) = await inbox(bus, SID)
    assert "done-42" in str(notice["text"])
    assert 'state="completed"' in str(notice["text"])
    assert notice["metadata"]["exit_code"] == 0  # type: ignore[index]
    await runner.wait_idle(SID)
    assert runner.drained == [SID]  # a live completion wakes the session
    assert (await recovery.recover()).admitted == []
    assert len(await inbox(bus, SID)) == 1
    await recovery.close()
    await jobs.close()


async def test_a_command_that_finished_while_the_service_was_down_gives_its_real_result(
    stores: Stores, shell_jobs: ShellJobs, tmp_path: Path
) -> None:
    key = await backgrounded(stores, shell_jobs, "echo real-$((2+3)); exit 4", tmp_path)
    assert (await shell_jobs.wait_job(key)).status == "exited"

    bus = await stores.open()
    jobs = JobRegistry(JobStore(bus.store))
    runner = FakeRunner(bus)
    report = await RestartRecovery(bus, jobs, runner, host=shell_jobs).recover()
    assert len(report.admitted) == 1
    (notice,) = await inbox(bus, SID)
    assert "real-5" in str(notice["text"])
    assert "[exit code 4]" in str(notice["text"])
    assert notice["metadata"]["state"] == "error"  # type: ignore[index]
    assert runner.drained == []  # recovery does not wake an idle session
    assert await jobs.pending_background() == []


async def test_a_command_killed_with_the_pty_host_is_reported_cancelled_once(
    stores: Stores, host: PtyHostClient, shell_jobs: ShellJobs, tmp_path: Path
) -> None:
    await backgrounded(stores, shell_jobs, "sleep 300", tmp_path)
    os.kill(host.pid, signal.SIGKILL)

    bus = await stores.open()
    jobs = JobRegistry(JobStore(bus.store))
    runner = FakeRunner(bus)
    recovery = RestartRecovery(bus, jobs, runner, host=shell_jobs)
    report = await recovery.recover()
    assert len(report.admitted) == 1
    assert report.adopted == []
    (notice,) = await inbox(bus, SID)
    assert SERVER_RESTARTED in str(notice["text"])
    assert notice["metadata"]["state"] == "cancelled"  # type: ignore[index]
    assert (await recovery.recover()).admitted == []
    assert len(await inbox(bus, SID)) == 1
    assert runner.drained == []


async def test_a_call_run_again_after_its_notice_was_delivered_is_not_noticed_twice(
    stores: Stores, shell_jobs: ShellJobs, tmp_path: Path
) -> None:
    """The soak's find: the service dies after the background call's marker is durable but
    before its tool result; the successor's recovery delivers the notice, then the resumed
    turn runs the still-open call again, which adopts the job and backgrounds it anew. The
    notice id is the job's, so the second delivery is refused."""
    command = "echo once-$((6*7))"
    key = await backgrounded(stores, shell_jobs, command, tmp_path)
    assert (await shell_jobs.wait_job(key)).status == "exited"

    bus = await stores.open()
    runner = FakeRunner(bus)
    work = BackgroundWork(bus, runner, shell_jobs)

    async def settled() -> bool:
        info = work.jobs.get(key)
        idle = info is not None and info.status != "running"
        return idle and not await work.jobs.pending_background()

    try:
        assert len((await work.recovery.recover()).admitted) == 1
        # The resumed turn runs the open call again: it adopts the finished job.
        state = await shell_jobs.start_job(SID, "call_a", command, str(tmp_path))
        assert not state.created
        ctx = ShellContext(root=tmp_path, session_id=SID, call_id="call_a")
        await work.shell_backgrounded(ctx, state, command)
        await wait_for(settled, DEADLINE, "the second run settled and its marker acknowledged")
        notices = await rows(bus, "SELECT count(*) FROM event WHERE type = 'session.synthetic'")
        assert notices == [(1,)]
        await runner.wait_idle(SID)
    finally:
        await work.close()  # its notifier tasks end with it, pass or fail
