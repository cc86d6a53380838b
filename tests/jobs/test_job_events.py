"""Every change of a session's job reaches SSE subscribers as the ephemeral
`session.job.updated {job}` (the jobs route's shape), which the UI's jobs panel follows:
started running, moved to the background, settled, cancelled."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from desktop.events.fanout import Subscription
from desktop.jobs.model import ShellRecovery
from desktop.jobs.service import BackgroundWork
from tests.support.jobs import Stores

SID = "ses_job_events"


class UnusedTurns:
    """The runner's turns: never reached by these jobs."""

    def active(self) -> set[str]:
        raise AssertionError("not expected")

    def wake(self, session_id: str) -> None:
        raise AssertionError("not expected")

    def resume(self, session_id: str) -> None:
        raise AssertionError("not expected")

    async def wait_idle(self, session_id: str) -> None:
        raise AssertionError("not expected")

    async def interrupt(self, session_id: str) -> bool:
        raise AssertionError("not expected")


def job_events(sub: Subscription) -> list[dict[str, Any]]:
    out = []
    while not sub.queue.empty():
        _, frame = sub.queue.get_nowait()
        payload = json.loads(frame.decode().split("data: ", 1)[1])
        if payload["type"] == "session.job.updated":
            assert payload["properties"]["session_id"] == SID
            out.append(payload["properties"]["data"]["job"])
    return out


async def test_job_changes_are_broadcast_as_session_job_updated_with_the_route_shape(
    stores: Stores,
) -> None:
    bus = await stores.open()
    work = BackgroundWork(bus, UnusedTurns(), None)
    sub = bus.fanout.subscribe()
    gate = asyncio.Event()

    async def run() -> str:
        await gate.wait()
        return "out"

    key = f"job:{SID}:call_1"
    meta = {"session_id": SID, "call_id": "call_1", "job_key": key, "terminal_id": "pty_1"}
    recovery = ShellRecovery(SID, "call_1", key, "echo hi")
    await work.jobs.start(
        job_id=key, kind="shell", run=run, title="echo hi", metadata=meta, recovery=recovery
    )
    await work.jobs.background(key)
    gate.set()
    await work.jobs.wait(key)

    async def forever() -> str:
        await asyncio.Event().wait()
        return "never"

    other = await work.jobs.start(
        kind="shell", run=forever, title="sleep", metadata={"session_id": SID}
    )
    await work.jobs.cancel(other.id)

    seen = [(j["id"], j["status"], j["background"]) for j in job_events(sub)]
    assert seen == [
        (key, "running", False),
        (key, "running", True),
        (key, "completed", True),
        (other.id, "running", False),
        (other.id, "cancelled", False),
    ]
    assert job_events(sub) == []  # nothing more
    await work.close()


async def test_a_job_without_a_session_is_not_broadcast(stores: Stores) -> None:
    bus = await stores.open()
    work = BackgroundWork(bus, UnusedTurns(), None)
    sub = bus.fanout.subscribe()

    async def run() -> str:
        return "x"

    job = await work.jobs.start(kind="shell", run=run)
    await work.jobs.wait(job.id)
    assert job_events(sub) == []
    await work.close()
