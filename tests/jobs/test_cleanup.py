"""Cleanup of finished job terminals: real PTY host jobs, real SQLite, and real `desk serve`
processes for the timer, session deletion and the start-up check of the retention."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from desktop.config import Settings, load_settings
from desktop.events.bus import DurableBus, draft
from desktop.jobs.cleanup import JobCleanup
from desktop.jobs.host import ShellJobs
from desktop.jobs.model import Job, JobStore, ShellRecovery
from desktop.jobs.registry import JobRegistry
from desktop.ptyhost.client import PtyHostClient
from desktop.ptyhost.launcher import ensure_host
from desktop.ptyhost.protocol import PtyHostError
from desktop.store.log import now_ms
from desktop.tools.shell import JobState
from tests.support.host import stop_host
from tests.support.jobs import Stores, create_session
from tests.support.service import Service as Served
from tests.support.service import serve
from tests.support.sessions import started
from tests.support.wait import DEADLINE, wait_for

SID = "ses_clean"
DAY = 24 * 3600.0


@pytest.fixture
async def shell_jobs(host: PtyHostClient, settings: Settings) -> AsyncIterator[ShellJobs]:
    runner = ShellJobs.for_settings(settings)
    yield runner
    await runner.close()


async def finished(jobs: ShellJobs, call_id: str, command: str, cwd: Path) -> JobState:
    state = await jobs.start_job(SID, call_id, command, str(cwd))
    done = await asyncio.wait_for(jobs.wait_job(state.key), DEADLINE)
    assert done.status == "exited"
    assert done.ended is not None
    return done


async def terminal_exists(host: PtyHostClient, terminal_id: str | None) -> bool:
    assert terminal_id is not None
    try:
        await host.get(terminal_id)
    except PtyHostError as exc:
        if exc.status == 404:
            return False
        raise
    return True


async def open_shell_call(bus: DurableBus, call_id: str, command: str) -> None:
    """A turn's `shell` part that is still running (its call waits for the job)."""
    mid = "msg_open"
    for kind, data in (
        started(mid),
        (
            "session.tool.called",
            {"message_id": mid, "call_id": call_id, "name": "shell", "input": {"command": command}},
        ),
    ):
        await bus.publish(draft(SID, kind, data))


def later(seconds: float) -> int:
    """A clock `seconds` ahead: the sweep sees jobs that old without anyone waiting."""
    return now_ms() + int(seconds * 1000)


async def test_the_sweep_removes_an_old_finished_job_and_keeps_running_owed_and_waited_ones(
    stores: Stores, shell_jobs: ShellJobs, host: PtyHostClient, tmp_path: Path
) -> None:
    bus = await stores.open()
    await create_session(bus, SID)
    registry = JobRegistry(JobStore(bus.store))
    old = await finished(shell_jobs, "call_old", "echo old", tmp_path)
    owed = await finished(shell_jobs, "call_owed", "echo owed", tmp_path)
    waited = await finished(shell_jobs, "call_wait", "echo waited", tmp_path)
    running = await shell_jobs.start_job(SID, "call_run", "sleep 300", str(tmp_path))
    recovery = ShellRecovery(SID, "call_owed", owed.key, "echo owed")
    await registry.store.put([Job.recovered(owed.key, "msg_owed", recovery, "completed", "owed")])
    await open_shell_call(bus, "call_wait", "echo waited")

    young = JobCleanup(bus, registry, shell_jobs, retention=DAY)
    assert await young.sweep() == []  # within the retention: everything stays

    cleanup = JobCleanup(bus, registry, shell_jobs, retention=DAY, clock=lambda: later(DAY + 60))
    assert await cleanup.sweep() == [old.key]
    assert (await shell_jobs.get_job(old.key)).status == "gone"
    assert not await terminal_exists(host, old.terminal_id)
    for kept in (owed, waited, running):
        assert await terminal_exists(host, kept.terminal_id)
    assert (await shell_jobs.get_job(running.key)).status == "running"

    # Once its notice is admitted (the marker goes), the owed job goes at the next sweep.
    await registry.complete_background("msg_owed")
    assert await cleanup.sweep() == [owed.key]
    assert await terminal_exists(host, waited.terminal_id)
    assert await terminal_exists(host, running.terminal_id)
    await registry.close()


async def test_the_sweep_keeps_the_job_of_a_running_registry_job_and_never_a_running_one(
    stores: Stores, shell_jobs: ShellJobs, host: PtyHostClient, tmp_path: Path
) -> None:
    """A job this process still waits for (its registry job has not settled: the notice
    is about to be built from it) stays, however old its command."""
    bus = await stores.open()
    await create_session(bus, SID)
    registry = JobRegistry(JobStore(bus.store))
    done = await finished(shell_jobs, "call_done", "echo done", tmp_path)
    hold = asyncio.Event()

    async def run() -> str:
        await hold.wait()
        return "done"

    await registry.start(job_id=done.key, kind="shell", run=run, metadata={"job_key": done.key})
    cleanup = JobCleanup(bus, registry, shell_jobs, retention=1, clock=lambda: later(3600))
    assert await cleanup.sweep() == []
    hold.set()
    await registry.wait(done.key)
    assert await cleanup.sweep() == [done.key]
    assert not await terminal_exists(host, done.terminal_id)
    await registry.close()


async def test_finished_jobs_of_a_deleted_session_are_swept_at_once_running_ones_are_not(
    stores: Stores, shell_jobs: ShellJobs, host: PtyHostClient, tmp_path: Path
) -> None:
    """Deleting a session removes its jobs itself; when that could not happen (the host was
    unreachable), the sweep removes its finished ones without waiting for the retention."""
    bus = await stores.open()
    await create_session(bus, SID)
    registry = JobRegistry(JobStore(bus.store))
    done = await finished(shell_jobs, "call_done", "echo done", tmp_path)
    running = await shell_jobs.start_job(SID, "call_run", "sleep 300", str(tmp_path))
    await bus.publish(draft(SID, "session.deleted", {}))
    cleanup = JobCleanup(bus, registry, shell_jobs, retention=DAY)
    assert await cleanup.sweep() == [done.key]
    assert await terminal_exists(host, running.terminal_id)
    await registry.close()


# ----- through real services ---------------------------------------------------------------


async def call(served: Served, method: str, path: str, body: object = None) -> Any:
    async with (
        aiohttp.ClientSession(headers=served.headers) as http,
        http.request(method, served.url + path, json=body) as response,
    ):
        payload = await response.json() if response.content_type == "application/json" else {}
        assert response.status < 400, payload
        return payload.get("data")


async def pty_status(served: Served, terminal_id: str) -> int:
    async with (
        aiohttp.ClientSession(headers=served.headers) as http,
        http.get(f"{served.url}/api/pty/{terminal_id}") as response,
    ):
        return response.status


async def job(client: PtyHostClient, session_id: str, call_id: str, command: str, cwd: Path) -> str:
    answer = await client.job_start(f"job:{session_id}:{call_id}", command, str(cwd))
    info = answer["job"]
    assert isinstance(info, dict)
    return str(info["terminal_id"])


@pytest.fixture
async def own_host(settings: Settings) -> AsyncIterator[PtyHostClient]:
    """A PTY host the services find running (they connect to it at start)."""
    client = await ensure_host(settings)
    yield client
    await client.close()
    await stop_host(settings)


async def test_deleting_a_session_removes_its_and_its_childs_job_terminals(
    settings: Settings, own_host: PtyHostClient, tmp_path: Path
) -> None:
    served = await asyncio.to_thread(serve, settings)
    try:
        parent = (await call(served, "POST", "/api/session", {"directory": str(tmp_path)}))["id"]
        child = (
            await call(
                served, "POST", "/api/session", {"directory": str(tmp_path), "parent_id": parent}
            )
        )["id"]
        other = (await call(served, "POST", "/api/session", {"directory": str(tmp_path)}))["id"]
        mine = [
            await job(own_host, parent, "call_1", "echo parent", tmp_path),
            await job(own_host, child, "call_2", "sleep 300", tmp_path),
        ]
        kept = await job(own_host, other, "call_3", "echo other", tmp_path)
        for terminal_id in (*mine, kept):
            assert await pty_status(served, terminal_id) == 200
        await call(served, "DELETE", f"/api/session/{parent}")
        for terminal_id in mine:
            assert await pty_status(served, terminal_id) == 404
        assert await pty_status(served, kept) == 200
        assert [j["session_id"] for j in await own_host.job_list()] == [other]
    finally:
        await asyncio.to_thread(served.kill)


async def test_the_services_timer_removes_a_finished_job_after_the_retention_not_a_running_one(
    settings: Settings, own_host: PtyHostClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DESK_JOB_RETENTION", "0.5")
    served = await asyncio.to_thread(serve, settings)
    try:
        sid = (await call(served, "POST", "/api/session", {"directory": str(tmp_path)}))["id"]
        done = await job(own_host, sid, "call_done", "echo done", tmp_path)
        running = await job(own_host, sid, "call_run", "sleep 300", tmp_path)

        async def swept() -> bool:
            return await pty_status(served, done) == 404

        await wait_for(swept, DEADLINE, "the finished job's terminal to be removed by the timer")
        assert await pty_status(served, running) == 200
        (left,) = await own_host.job_list()
        assert left["status"] == "running"
    finally:
        await asyncio.to_thread(served.kill)


@pytest.mark.parametrize("value", ["0", "-5", "nan", "soon"])
def test_a_retention_that_is_not_a_positive_number_is_a_clear_start_up_error(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("DESK_JOB_RETENTION", value)
    with pytest.raises(ValueError, match="DESK_JOB_RETENTION must be a"):
        load_settings()
    env = {**os.environ, "DESK_DATA_DIR": str(settings.data_dir)}
    env["DESK_RUNTIME_DIR"] = str(settings.runtime_dir)
    done = subprocess.run(
        [sys.executable, "-m", "desktop", "serve", "--port", "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=False,
    )
    assert done.returncode == 2
    assert "DESK_JOB_RETENTION must be a" in done.stderr
    assert done.stdout == ""


def record(session_id: str, job_id: str, completed: int) -> Job:
    return Job(
        job_id,
        "shell",
        "completed",
        completed - 5,
        title="echo " + job_id,
        completed_at=completed,
        metadata={"session_id": session_id},
    )


async def test_job_rows_go_after_the_retention_with_their_session_or_when_damaged(
    stores: Stores,
) -> None:
    bus = await stores.open()
    await create_session(bus, SID)
    rows = JobStore(bus.store)
    now = now_ms()
    await rows.put([record(SID, "job:young", now)])
    await rows.put([record(SID, "job:old", now - int((DAY + 60) * 1000))])
    await rows.put([record("ses_gone", "job:orphan", now)])
    await bus.store.write(
        lambda c: c.execute(
            "INSERT INTO job (id, session_id, owed, data, updated) VALUES (?, ?, 0, ?, ?)",
            ("job:bad", SID, '{"id": 7}', now),
        )
    )
    # A damaged row is never listed, and never stops the others from being.
    assert [j.id for j in await rows.of_session(SID)] == ["job:old", "job:young"]

    cleanup = JobCleanup(bus, JobRegistry(rows), None, retention=DAY)
    assert await cleanup.expire_rows() == 3
    assert [j.id for j in await rows.of_session(SID)] == ["job:young"]
    assert await rows.of_session("ses_gone") == []
    assert await cleanup.expire_rows() == 0


async def test_an_owed_row_outlives_the_retention_and_its_session_until_acknowledged(
    stores: Stores,
) -> None:
    bus = await stores.open()
    rows = JobStore(bus.store)
    recovery = ShellRecovery("ses_gone", "call_o", "job:ses_gone:call_o", "echo o")
    owed = Job.recovered("job:owed", "msg_owed", recovery, "completed", "o")
    await rows.put([dataclasses.replace(owed, completed_at=1)])
    cleanup = JobCleanup(bus, JobRegistry(rows), None, retention=DAY)
    assert await cleanup.expire_rows() == 0
    assert [j.id for j in await rows.owed()] == ["job:owed"]
    assert await rows.acknowledge("msg_owed")
    assert await cleanup.expire_rows() == 1
