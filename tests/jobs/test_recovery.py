"""Restart recovery of background work, and its cancellation, on a real SQLite file. Each
"restart" closes the registry, the runner and the store, and opens new ones on the same
file; the runner is a scripted stand-in (tests/support/fake_runner.py), everything else is real."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

from desktop.events.bus import DurableBus, draft
from desktop.jobs.model import (
    JobStore,
    ShellRecovery,
    SubagentRecovery,
)
from desktop.jobs.notices import SERVER_RESTARTED
from desktop.jobs.recovery import RestartRecovery
from desktop.jobs.registry import JobRegistry
from desktop.store import sessions as q
from tests.support.fake_runner import Drain, FakeRunner, deliver
from tests.support.jobs import Stores, create_session, inbox, rows


@dataclass
class Service:
    """One service process's worth of parts on the shared database file."""

    bus: DurableBus
    jobs: JobRegistry
    runner: FakeRunner
    recovery: RestartRecovery


async def start(stores: Stores, drain: Drain | None = None, budget: int = 10) -> Service:
    bus = await stores.open()
    jobs = JobRegistry(JobStore(bus.store))
    runner = FakeRunner(bus, drain) if drain else FakeRunner(bus)
    return Service(bus, jobs, runner, RestartRecovery(bus, jobs, runner, budget=budget))


async def stop(stores: Stores, service: Service) -> None:
    await service.recovery.close()
    await service.runner.close()
    await service.jobs.close()
    await stores.close(service.bus)


async def seed(
    bus: DurableBus,
    sid: str,
    *,
    parent: str | None = None,
    suspended: bool = False,
    attempts: int = 0,
) -> None:
    await create_session(bus, sid, parent)
    store = bus.store

    def claim() -> None:
        conn = store.connection()
        if suspended:
            q.claim(conn, sid, 1)
        conn.execute("UPDATE session SET resume_attempts = ? WHERE id = ?", (attempts, sid))

    await store.run(claim)


async def never() -> str:
    await asyncio.Event().wait()
    return "never"


async def background_shell(jobs: JobRegistry, session: str, call: str, command: str) -> None:
    key = f"job:{session}:{call}"
    await jobs.start(
        job_id=key, kind="shell", run=never, recovery=ShellRecovery(session, call, key, command)
    )
    await jobs.background(key)


async def background_child(
    jobs: JobRegistry, parent: str, child: str, description: str, result: str | None = None
) -> None:
    async def done() -> str:
        assert result is not None
        return result

    recovery = SubagentRecovery(parent, child, "explore", description)
    await jobs.start(
        job_id=child, kind="subagent", run=never if result is None else done, recovery=recovery
    )
    await jobs.background(child)
    if result is not None:
        await jobs.wait(child)


async def synthetic(bus: DurableBus, sid: str) -> list[dict[str, object]]:
    found = await rows(
        bus, "SELECT data FROM message WHERE session_id = ? AND type = 'synthetic'", sid
    )
    return [json.loads(str(r[0])) for r in found]


async def claims(bus: DurableBus, *sids: str) -> dict[str, bool]:
    out = {}
    for sid in sids:
        found = await rows(bus, "SELECT time_suspended FROM session WHERE id = ?", sid)
        out[sid] = found[0][0] is not None
    return out


async def attempts(bus: DurableBus, sid: str) -> int:
    return int(str((await rows(bus, "SELECT resume_attempts FROM session WHERE id=?", sid))[0][0]))


async def test_orphaned_shell_notices_are_admitted_without_waking_and_delivered_once(
    stores: Stores,
) -> None:
    before = await start(stores)
    parent, child = "ses_bg_parent", "ses_bg_child"
    await seed(before.bus, parent)
    await seed(before.bus, child, parent=parent, suspended=True)
    await background_shell(before.jobs, parent, "call_bg", "sleep 60")
    await background_shell(before.jobs, child, "call_child", "sleep 30")
    assert len(await before.jobs.pending_background()) == 2
    await stop(stores, before)

    after = await start(stores)
    after.runner.drain = lambda sid: _deliver_only(after.bus, sid)
    await after.recovery.recover()
    assert await synthetic(after.bus, parent) != []  # admitted (projected) ...
    (notice,) = await inbox(after.bus, parent)  # ... and waiting for delivery
    assert SERVER_RESTARTED in str(notice["text"])
    assert notice["description"] == "sleep 60"
    meta = notice["metadata"]
    assert isinstance(meta, dict)
    assert (meta["source"], meta["job_id"], meta["call_id"], meta["state"]) == (
        "shell",
        f"job:{parent}:call_bg",
        "call_bg",
        "cancelled",
    )
    (child_notice,) = await inbox(after.bus, child)
    assert child_notice["metadata"]["state"] == "cancelled"  # type: ignore[index]
    assert after.runner.drained == []  # nobody woken
    assert await claims(after.bus, parent, child) == {parent: False, child: False}
    assert await after.jobs.pending_background() == []

    await after.recovery.recover()  # again: nothing new
    assert len(await inbox(after.bus, parent)) == 1
    assert after.runner.drained == []
    after.runner.wake(parent)
    await after.runner.wait_idle(parent)
    assert await inbox(after.bus, parent) == []
    assert len(await synthetic(after.bus, parent)) == 1
    after.runner.wake(parent)
    await after.runner.wait_idle(parent)
    assert len(await synthetic(after.bus, parent)) == 1


async def _deliver_only(bus: DurableBus, sid: str) -> None:
    await deliver(bus, sid)


async def test_locally_running_background_work_is_left_alone(stores: Stores) -> None:
    service = await start(stores)
    await seed(service.bus, "ses_local")
    await background_shell(service.jobs, "ses_local", "call_run", "sleep 60")
    await service.recovery.recover()
    assert await synthetic(service.bus, "ses_local") == []
    assert service.jobs.get("job:ses_local:call_run").status == "running"  # type: ignore[union-attr]
    assert len(await service.jobs.pending_background()) == 1


async def test_a_silent_shell_failure_recorded_before_its_notice_is_preserved(
    stores: Stores,
) -> None:
    before = await start(stores)
    await seed(before.bus, "ses_silent")
    gate = asyncio.Event()

    async def work() -> str:
        await gate.wait()
        return "(no output)\n\nCommand exited with code 7."

    key = "job:ses_silent:call_7"
    await before.jobs.start(
        job_id=key,
        kind="shell",
        run=work,
        recovery=ShellRecovery("ses_silent", "call_7", key, "exit 7"),
    )
    await before.jobs.background(key)
    gate.set()
    await before.jobs.wait(key)
    await stop(stores, before)  # crash before the notice was admitted

    after = await start(stores)
    await after.recovery.recover()
    (notice,) = await inbox(after.bus, "ses_silent")
    assert "(no output)\n\nCommand exited with code 7." in str(notice["text"])
    assert notice["metadata"]["state"] == "completed"  # type: ignore[index]
    assert await after.jobs.pending_background() == []


async def _already_notified(stores: Stores, delivered: bool) -> None:
    before = await start(stores)
    sid = "ses_notified"
    await seed(before.bus, sid)
    await background_shell(before.jobs, sid, "call_n", "echo done")
    (marker,) = await before.jobs.pending_background()
    data = {
        "message_id": marker.notification_id,
        "text": "Command already completed",
        "metadata": {"source": "shell", "state": "completed"},
    }

    def row(conn: object) -> None:
        q.inbox_add(
            before.bus.store.connection(),
            inbox_id=str(marker.notification_id),
            session_id=sid,
            mode="steer",
            kind="synthetic",
            data={"text": data["text"]},
            created=1,
        )

    # Admitted, then a crash before the marker was acknowledged.
    await before.bus.publish(draft(sid, "session.synthetic", data), commit=row)
    if delivered:
        await deliver(before.bus, sid)
    await stop(stores, before)

    after = await start(stores)
    await after.recovery.recover()
    assert await after.jobs.pending_background() == []
    assert len(await inbox(after.bus, sid)) == (0 if delivered else 1)
    await deliver(after.bus, sid)
    (message,) = await synthetic(after.bus, sid)
    assert (message["id"], message["text"]) == (marker.notification_id, "Command already completed")


async def test_a_shell_notice_already_admitted_is_not_duplicated(stores: Stores) -> None:
    await _already_notified(stores, delivered=False)


async def test_a_shell_notice_already_delivered_is_not_duplicated(stores: Stores) -> None:
    await _already_notified(stores, delivered=True)


async def test_markers_of_a_deleted_session_are_acknowledged(stores: Stores) -> None:
    before = await start(stores)
    await seed(before.bus, "ses_deleted")
    await background_shell(before.jobs, "ses_deleted", "call_d", "sleep 60")
    await before.bus.publish(draft("ses_deleted", "session.deleted", {}))
    await stop(stores, before)
    after = await start(stores)
    report = await after.recovery.recover()
    assert await after.jobs.pending_background() == []
    assert len(report.acknowledged) == 1


async def test_cancellation_is_delivered_at_the_resumed_parents_next_step(stores: Stores) -> None:
    before = await start(stores)
    parent = "ses_claimed_parent"
    await seed(before.bus, parent, suspended=True)
    await background_shell(before.jobs, parent, "call_c", "sleep 60")
    await stop(stores, before)

    seen: list[list[str]] = []
    after = await start(stores)

    async def step(sid: str) -> None:
        seen.append(await deliver(after.bus, sid))

    after.runner.drain = step
    report = await after.recovery.recover()
    assert report.resumed == [parent]
    await after.runner.wait_idle(parent)
    (texts,) = seen
    assert len(texts) == 1
    assert SERVER_RESTARTED in texts[0]
    assert await inbox(after.bus, parent) == []
    assert await claims(after.bus, parent) == {parent: False}


async def test_a_background_subagent_is_resumed_and_its_parent_notified_exactly_once(
    stores: Stores,
) -> None:
    before = await start(stores)
    parent, child, unrelated = "ses_sub_parent", "ses_sub_child", "ses_sub_unrelated"
    await seed(before.bus, parent, suspended=True, attempts=1)
    await seed(before.bus, child, parent=parent, suspended=True)
    await seed(before.bus, unrelated, parent=parent, suspended=True)
    await background_child(before.jobs, parent, child, "Inspect recovery")
    await stop(stores, before)

    resumed, release = asyncio.Event(), asyncio.Event()
    parent_resumed, parent_woken = asyncio.Event(), asyncio.Event()
    after = await start(stores)

    async def drain(sid: str) -> None:
        if sid == child:
            resumed.set()
            await release.wait()
            return
        runs = after.runner.drained.count(parent)
        (parent_resumed if runs == 1 else parent_woken).set()

    after.runner.drain = drain
    await after.recovery.recover()
    await resumed.wait()
    await parent_resumed.wait()
    await after.runner.wait_idle(parent)

    await after.recovery.recover()  # the child runs here: nothing is done twice
    assert sorted(after.runner.drained) == sorted([child, parent])
    assert await claims(after.bus, parent, child, unrelated) == {
        parent: False,
        child: True,
        unrelated: False,
    }
    assert await attempts(after.bus, child) == 1
    assert after.jobs.get(child).status == "running"  # type: ignore[union-attr]

    release.set()
    await parent_woken.wait()
    assert after.runner.drained.count(child) == 1
    assert after.runner.drained.count(parent) == 2
    (notice,) = await inbox(after.bus, parent)
    assert notice["description"] == "Inspect recovery"
    assert notice["metadata"] == {
        "source": "subagent",
        "child_id": child,
        "agent": "explore",
        "state": "completed",
    }
    assert await after.jobs.pending_background() == []
    await after.recovery.recover()
    assert len(await inbox(after.bus, parent)) == 1


async def test_a_stored_subagent_result_is_delivered_without_rerunning_the_child(
    stores: Stores,
) -> None:
    before = await start(stores)
    parent, child = "ses_done_parent", "ses_done_child"
    await seed(before.bus, parent)
    await seed(before.bus, child, parent=parent)
    await background_child(before.jobs, parent, child, "Completed inspection", "Recovered result")
    await stop(stores, before)

    after = await start(stores)
    await after.recovery.recover()
    await after.runner.wait_idle(parent)
    assert after.runner.drained == [parent]  # woken; the child never ran
    (notice,) = await inbox(after.bus, parent)
    assert "Recovered result" in str(notice["text"])
    assert notice["metadata"]["state"] == "completed"  # type: ignore[index]
    assert await after.jobs.pending_background() == []


async def _parent_budget(stores: Stores, spent: int) -> None:
    before = await start(stores)
    parent = "ses_budget_parent"
    children = ["ses_budget_child_1", "ses_budget_child_2"]
    await seed(before.bus, parent, suspended=True, attempts=spent)
    for child in children:
        await seed(before.bus, child, parent=parent)
        await background_child(before.jobs, parent, child, "Completed inspection", "Recovered")
    await stop(stores, before)

    counted: list[int] = []
    after = await start(stores, budget=2)

    async def drain(sid: str) -> None:
        counted.append(await attempts(after.bus, sid))

    after.runner.drain = drain
    await after.recovery.recover()
    await after.runner.wait_idle(parent)
    if spent < 2:
        assert counted == [2]
        assert after.runner.drained == [parent]
    else:
        assert counted == []
        assert after.runner.drained == []
        exhausted = await rows(
            after.bus, "SELECT COUNT(*) FROM event WHERE type = 'session.resume.exhausted'"
        )
        assert exhausted == [(1,)]
    assert await claims(after.bus, parent) == {parent: False}
    assert await attempts(after.bus, parent) == 0
    assert len(await inbox(after.bus, parent)) == 2
    assert await after.jobs.pending_background() == []
    await after.recovery.recover()
    assert len(after.runner.drained) == (1 if spent < 2 else 0)


async def test_a_suspended_parents_budget_is_honoured_after_one_attempt(stores: Stores) -> None:
    await _parent_budget(stores, 1)


async def test_a_suspended_parents_budget_is_honoured_after_two_attempts(stores: Stores) -> None:
    await _parent_budget(stores, 2)


async def test_a_recovered_subagent_over_its_budget_is_terminalized(stores: Stores) -> None:
    before = await start(stores)
    parent, child = "ses_ex_parent", "ses_ex_child"
    await seed(before.bus, parent)
    await seed(before.bus, child, parent=parent, suspended=True, attempts=2)
    await background_child(before.jobs, parent, child, "Exhausted inspection")
    await stop(stores, before)

    after = await start(stores, budget=2)
    await after.recovery.recover()
    await after.runner.wait_idle(parent)
    assert after.runner.drained == [parent]
    assert await claims(after.bus, child) == {child: False}
    (notice,) = await inbox(after.bus, parent)
    assert "will not be resumed automatically" in str(notice["text"])
    meta = notice["metadata"]
    assert isinstance(meta, dict)
    assert (meta["source"], meta["child_id"], meta["state"]) == ("subagent", child, "error")
    assert await after.jobs.pending_background() == []


async def test_a_user_cancelled_background_child_is_not_resumed_and_its_parent_is_told(
    stores: Stores,
) -> None:
    before = await start(stores)
    parent, child = "ses_cx_parent", "ses_cx_child"
    await seed(before.bus, parent)
    await seed(before.bus, child, parent=parent)
    running = asyncio.Event()

    async def drain(sid: str) -> None:
        running.set()
        await asyncio.Event().wait()

    before.runner.drain = drain
    before.runner.on_user_interrupt = before.jobs.cancel  # the runner's interrupt seam

    async def run_child() -> str:
        before.runner.resume(child)
        await before.runner.wait_idle(child)
        return "unused"

    await before.jobs.start(
        job_id=child,
        kind="subagent",
        run=run_child,
        recovery=SubagentRecovery(parent, child, "general", "Cancelled inspection"),
    )
    await before.jobs.background(child)
    await running.wait()
    assert await before.runner.interrupt(child)
    assert (await before.jobs.wait(child)).status == "cancelled"  # type: ignore[union-attr]
    (marker,) = await before.jobs.pending_background()
    assert (marker.id, marker.status) == (child, "cancelled")
    assert await claims(before.bus, child) == {child: False}
    await stop(stores, before)

    after = await start(stores)
    await after.recovery.recover()
    await after.runner.wait_idle(parent)
    assert after.runner.drained == [parent]
    (notice,) = await inbox(after.bus, parent)
    assert "Subagent cancelled" in str(notice["text"])
    assert notice["metadata"]["state"] == "cancelled"  # type: ignore[index]
    assert await after.jobs.pending_background() == []
