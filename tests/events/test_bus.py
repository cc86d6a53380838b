"""The durable bus on the real store thread: one transaction per batch, rollback per
request, fan-out after commit, ephemeral events never stored, bounded subscribers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from desktop.events.bus import DurableBus, draft
from desktop.events.errors import SessionError
from desktop.events.fanout import Fanout
from desktop.store.db import Store
from tests.support.sessions import started


@pytest.fixture
async def bus(tmp_path: Path) -> AsyncIterator[DurableBus]:
    store = Store(tmp_path / "desk.sqlite3")
    await store.open()
    bus = DurableBus(store, Fanout(limit=64))
    bus.start()
    yield bus
    await bus.stop()
    await store.close()


async def count(bus: DurableBus, table: str) -> int:
    return await bus.store.run(
        lambda: int(bus.store.connection().execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
    )


async def create(bus: DurableBus, sid: str) -> None:
    await bus.publish(draft(sid, "session.created", {"title": sid, "directory": "/"}))


async def test_queued_publishes_share_one_transaction_and_arrive_in_order(bus: DurableBus) -> None:
    await create(bus, "ses_a")
    sub = bus.fanout.subscribe()
    batches = bus.batches
    texts = [
        bus.publish(
            draft(
                "ses_a",
                "session.prompted",
                {"message_id": f"m{i}", "text": str(i), "mode": "queue"},
            )
        )
        for i in range(50)
    ]
    results = await asyncio.gather(*texts)
    assert bus.batches - batches < 50  # queued requests were batched
    positions = [r[0].position for r in results]
    assert positions == sorted(positions)
    seqs = [r[0].seq for r in results]
    assert seqs == list(range(2, 52))
    delivered = [sub.queue.get_nowait()[0] for _ in range(sub.queue.qsize())]
    assert [p for p in delivered if p is not None] == positions


async def test_one_failing_request_in_a_batch_is_rolled_back_alone(bus: DurableBus) -> None:
    await create(bus, "ses_b")
    sub = bus.fanout.subscribe()
    good = bus.publish(draft("ses_b", *started("m_ok")))
    bad = bus.publish(
        [
            draft("ses_b", *started("m_bad")),
            draft("ses_b", "session.text", {"message_id": "m_nowhere", "text": "x"}),
        ]
    )
    also_good = bus.publish(draft("ses_b", "session.text", {"message_id": "m_ok", "text": "y"}))
    results = await asyncio.gather(good, bad, also_good, return_exceptions=True)
    assert isinstance(results[1], SessionError)
    assert results[1].type == "session.message_not_found"
    assert not isinstance(results[0], BaseException)
    assert not isinstance(results[2], BaseException)
    assert await count(bus, "event") == 3  # created + two good ones; no seq gap
    assert [e.seq for e in results[2]] == [3]
    assert await count(bus, "message") == 1
    frames = [sub.queue.get_nowait()[1] for _ in range(sub.queue.qsize())]
    assert b"m_bad" not in b"".join(frames)


async def test_ephemeral_events_are_broadcast_and_never_stored(bus: DurableBus) -> None:
    await create(bus, "ses_c")
    sub = bus.fanout.subscribe()
    before = await count(bus, "event")
    bus.broadcast("ses_c", "session.text.delta", {"message_id": "m", "delta": "tok"})
    position, frame = sub.queue.get_nowait()
    assert position is None
    assert not frame.startswith(b"id:")
    payload = json.loads(frame.split(b"data: ", 1)[1])
    assert payload == {
        "type": "session.text.delta",
        "properties": {"session_id": "ses_c", "data": {"message_id": "m", "delta": "tok"}},
    }
    assert await count(bus, "event") == before
    with pytest.raises(SessionError):
        bus.broadcast("ses_c", "session.text", {"message_id": "m", "text": "durable type"})


async def test_a_subscriber_that_cannot_keep_up_is_cut_off_with_a_resync(bus: DurableBus) -> None:
    await create(bus, "ses_d")
    slow = bus.fanout.subscribe()
    for i in range(200):  # far beyond the queue limit of 64
        bus.broadcast("ses_d", "session.text.delta", {"message_id": "m", "delta": str(i)})
    assert slow.queue.qsize() == 1  # bounded: only the final frame is kept
    frames = [frame async for _, frame in slow.items(heartbeat=5)]
    assert len(frames) == 1
    assert b"server.resync" in frames[0]
    assert bus.fanout.subscriber_count == 0


async def test_publish_waits_for_the_commit_and_the_rows_are_there(bus: DurableBus) -> None:
    await create(bus, "ses_e")
    [event] = await bus.publish(draft("ses_e", *started("m1")))
    assert event.type == "session.step.started"
    assert event.aggregate_id == "ses_e"
    assert await count(bus, "message") == 1


async def test_a_projection_bug_fails_only_its_own_request(
    bus: DurableBus, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desktop.events import projector

    await create(bus, "ses_f")

    def broken(p: projector.Projection, e: object) -> None:
        raise RuntimeError("bug in a handler")

    monkeypatch.setitem(projector.HANDLERS, "session.reasoning", broken)
    before = await count(bus, "event")
    results = await asyncio.gather(
        bus.publish(draft("ses_f", *started("m1"))),
        bus.publish(draft("ses_f", "session.reasoning", {"message_id": "m1", "text": "x"})),
        bus.publish(draft("ses_f", "session.text", {"message_id": "m1", "text": "y"})),
        return_exceptions=True,
    )
    assert isinstance(results[1], RuntimeError)
    assert not isinstance(results[0], BaseException)
    assert not isinstance(results[2], BaseException)
    assert await count(bus, "event") == before + 2
    lone = bus.publish(draft("ses_f", "session.reasoning", {"message_id": "m1", "text": "z"}))
    with pytest.raises(RuntimeError):
        await lone
    assert await count(bus, "event") == before + 2
    [after] = await bus.publish(draft("ses_f", "session.text", {"message_id": "m1", "text": "w"}))
    assert after.seq == 4  # no gap left by the failures
