"""The job registry and its durable rows, on a real SQLite file; a "restart" closes the
registry and the store and opens new ones on the same file."""

from __future__ import annotations

import asyncio

import pytest

from desktop.jobs.model import (
    JobStore,
    ShellRecovery,
    SubagentRecovery,
)
from desktop.jobs.registry import JobRegistry
from tests.support.jobs import Stores

SHELL = ShellRecovery(
    "ses_background_shell", "call_bg", "job:ses_background_shell:call_bg", "echo done"
)
SUBAGENT = SubagentRecovery(
    "ses_background_parent", "ses_background_child", "explore", "Explore background recovery"
)


async def registry(stores: Stores) -> JobRegistry:
    return JobRegistry(JobStore((await stores.open()).store))


async def test_work_is_observed_through_get_wait_and_block(stores: Stores) -> None:
    jobs = await registry(stores)
    gate = asyncio.Event()

    async def work() -> str:
        await gate.wait()
        return "done"

    job = await jobs.start(kind="shell", run=work, metadata={"session_id": "ses_a"})
    assert jobs.get(job.id) == job
    assert job.status == "running"
    assert await jobs.wait(job.id, within=0.01) == job  # still running after the timeout
    blocked = asyncio.create_task(jobs.block(job.id, "ses_a"))
    gate.set()
    outcome = await blocked
    assert outcome is not None
    assert outcome.kind == "settled"
    assert outcome.info.status == "completed"
    assert outcome.info.output == "done"
    assert (await jobs.wait(job.id)) == outcome.info
    assert [i.id for i in jobs.jobs("ses_a")] == [job.id]
    assert jobs.jobs("ses_b") == []
    assert await jobs.wait("job_unknown") is None
    assert await jobs.block("job_unknown", "ses_a") is None
    assert stores.owed_on_disk() == {}  # never backgrounded: nothing durable


async def test_starting_a_running_job_id_again_returns_it_without_running_twice(
    stores: Stores,
) -> None:
    jobs = await registry(stores)
    runs = 0
    gate = asyncio.Event()

    async def work() -> str:
        nonlocal runs
        runs += 1
        await gate.wait()
        return "once"

    first = await jobs.start(job_id="job_same", kind="shell", run=work)
    second = await jobs.start(job_id="job_same", kind="shell", run=work)
    assert second == first
    gate.set()
    assert (await jobs.wait("job_same")).output == "once"  # type: ignore[union-attr]
    assert runs == 1


async def test_background_ownership_and_output_are_retained_until_the_notice_is_acknowledged(
    stores: Stores,
) -> None:
    jobs = await registry(stores)
    gate = asyncio.Event()

    async def work() -> str:
        await gate.wait()
        return "done"

    job = await jobs.start(kind="shell", recovery=SHELL, run=work)
    assert [m for m in await jobs.pending_background() if m.id == job.id] == []

    moved = await jobs.background(job.id)
    (running,) = await jobs.pending_background()
    assert (running.id, running.recovery, running.status) == (job.id, SHELL, "running")
    assert str(running.notification_id).startswith("msg_")
    assert moved is not None
    assert moved.notification_id == running.notification_id

    gate.set()
    await jobs.wait(job.id)
    (completed,) = await jobs.pending_background()
    assert completed.notification_id == running.notification_id
    assert (completed.status, completed.output, completed.recovery) == ("completed", "done", SHELL)
    assert stores.owed_on_disk()[str(completed.notification_id)]["output"] == "done"

    await jobs.complete_background(str(completed.notification_id))
    assert await jobs.pending_background() == []


async def test_background_all_writes_the_marker_before_releasing_the_blocked_turn(
    stores: Stores,
) -> None:
    jobs = await registry(stores)
    gate = asyncio.Event()

    async def work() -> str:
        await gate.wait()
        return "done"

    job = await jobs.start(kind="subagent", recovery=SUBAGENT, run=work)
    seen_on_release: list[dict[str, dict[str, object]]] = []

    async def turn() -> str:
        outcome = await jobs.block(job.id, SUBAGENT.parent_id)
        # Read through another connection at once: only committed rows are visible.
        seen_on_release.append(stores.owed_on_disk())
        assert outcome is not None
        return outcome.kind

    waiting = asyncio.create_task(turn())
    await asyncio.sleep(0)  # the turn registers as blocked (a yield, not a timing guess)
    other = await jobs.background_all("ses_someone_else")
    assert other == []  # not blocked by that session: left alone
    moved = await jobs.background_all(SUBAGENT.parent_id)
    assert [m.id for m in moved] == [job.id]
    assert await waiting == "backgrounded"
    (on_release,) = seen_on_release
    assert [v["status"] for v in on_release.values()] == ["running"]
    (marker,) = await jobs.pending_background()
    assert (marker.id, marker.recovery, marker.status) == (job.id, SUBAGENT, "running")

    await jobs.cancel(job.id)
    (cancelled,) = await jobs.pending_background()
    assert (cancelled.notification_id, cancelled.status) == (marker.notification_id, "cancelled")
    assert jobs.get(job.id).status == "cancelled"  # type: ignore[union-attr]
    await jobs.complete_background(str(marker.notification_id))
    assert await jobs.pending_background() == []


async def test_a_terminal_error_is_retained_for_recovery_until_acknowledged(stores: Stores) -> None:
    jobs = await registry(stores)
    gate = asyncio.Event()

    async def work() -> str:
        await gate.wait()
        raise RuntimeError("shell failed")

    job = await jobs.start(kind="shell", recovery=SHELL, run=work)
    await jobs.background(job.id)
    gate.set()
    await jobs.wait(job.id)
    (marker,) = await jobs.pending_background()
    assert (marker.id, marker.status, marker.error) == (job.id, "error", "shell failed")
    await jobs.complete_background(str(marker.notification_id))
    assert stores.owed_on_disk() == {}


async def test_recoverable_work_that_already_failed_is_durably_backgrounded(
    stores: Stores,
) -> None:
    jobs = await registry(stores)

    async def work() -> str:
        raise RuntimeError("shell failed")

    job = await jobs.start(kind="shell", recovery=SHELL, run=work)
    assert (await jobs.wait(job.id)).status == "error"  # type: ignore[union-attr]
    moved = await jobs.background(job.id)
    assert moved is not None
    assert moved.notification_id is not None
    assert moved.notification_id.startswith("msg_")
    (marker,) = await jobs.pending_background()
    assert (marker.id, marker.notification_id, marker.status, marker.error) == (
        job.id,
        moved.notification_id,
        "error",
        "shell failed",
    )


async def test_settled_work_without_recovery_cannot_be_backgrounded(stores: Stores) -> None:
    jobs = await registry(stores)

    async def work() -> str:
        return "x"

    job = await jobs.start(kind="read", run=work)
    await jobs.wait(job.id)
    assert await jobs.background(job.id) is None
    assert await jobs.background("job_unknown") is None
    assert await jobs.pending_background() == []


async def test_a_background_marker_survives_a_registry_and_store_restart(stores: Stores) -> None:
    bus = await stores.open()
    previous = JobRegistry(JobStore(bus.store))
    forever = asyncio.Event()

    async def work() -> str:
        await forever.wait()
        return "never"

    job = await previous.start(
        kind="shell",
        recovery=ShellRecovery("ses_background_restart", "call_r", "job:r", "sleep 60"),
        run=work,
    )
    await previous.background(job.id)
    await previous.close()
    await stores.close(bus)

    current = JobRegistry(JobStore((await stores.open()).store))
    assert current.get(job.id) is None  # process-local: the job itself did not survive
    (marker,) = await current.pending_background()
    assert (marker.id, marker.status) == (job.id, "running")
    await current.complete_background(str(marker.notification_id))
    assert await current.pending_background() == []


async def test_interrupted_running_work_keeps_its_marker_running(stores: Stores) -> None:
    jobs = await registry(stores)
    gate = asyncio.Event()

    async def work() -> str:
        await gate.wait()
        raise asyncio.CancelledError  # its session was interrupted by a shutdown

    job = await jobs.start(kind="subagent", recovery=SUBAGENT, run=work)
    await jobs.background(job.id)
    gate.set()
    settled = await jobs.wait(job.id)
    assert settled is not None
    assert settled.status == "cancelled"
    (marker,) = await jobs.pending_background()
    assert (marker.id, marker.status) == (job.id, "running")  # durable: recover it
    await jobs.complete_background(str(marker.notification_id))


async def test_closing_the_registry_cancels_live_work_without_settling_it(stores: Stores) -> None:
    jobs = await registry(stores)
    started = asyncio.Event()
    cleaned_up = asyncio.Event()

    async def work() -> str:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            cleaned_up.set()
        return "never"

    job = await jobs.start(kind="shell", recovery=SHELL, run=work)
    await jobs.background(job.id)
    await started.wait()
    waiter = asyncio.create_task(jobs.wait(job.id))
    await jobs.close()
    assert cleaned_up.is_set()
    seen = await waiter
    assert seen is not None
    assert seen.status == "running"
    (marker,) = await JobRegistry(jobs.store).pending_background()
    assert marker.status == "running"
    with pytest.raises(RuntimeError):
        await jobs.start(kind="shell", run=work)


async def test_cancel_records_cancelled_and_stops_the_run_while_settled_jobs_stay(
    stores: Stores,
) -> None:
    jobs = await registry(stores)
    stopped = asyncio.Event()

    async def work() -> str:
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()
        return "never"

    job = await jobs.start(kind="shell", recovery=SHELL, run=work)
    await jobs.background(job.id)
    cancelled = await jobs.cancel(job.id)
    assert cancelled is not None
    assert cancelled.status == "cancelled"
    assert stopped.is_set()
    assert (await jobs.wait(job.id)) == cancelled
    (marker,) = await jobs.pending_background()
    assert marker.status == "cancelled"
    assert await jobs.cancel(job.id) == cancelled  # settled: returned as it is
    assert await jobs.cancel("job_unknown") is None


async def test_background_releases_a_blocked_turn_and_a_second_call_changes_nothing(
    stores: Stores,
) -> None:
    jobs = await registry(stores)
    gate = asyncio.Event()

    async def work() -> str:
        await gate.wait()
        return "late"

    job = await jobs.start(kind="shell", recovery=SHELL, run=work)
    waiting = asyncio.create_task(jobs.block(job.id, SHELL.session_id))
    await asyncio.sleep(0)
    first = await jobs.background(job.id)
    again = await jobs.background(job.id)
    outcome = await waiting
    assert outcome is not None
    assert outcome.kind == "backgrounded"
    assert first == again
    assert first is not None
    assert len(await jobs.pending_background()) == 1
    # A turn blocking on backgrounded work returns at once.
    later = await jobs.block(job.id, SHELL.session_id)
    assert later is not None
    assert later.kind == "backgrounded"
    gate.set()
    assert (await jobs.wait(job.id)).output == "late"  # type: ignore[union-attr]
