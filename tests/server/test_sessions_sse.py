"""`GET /api/event`: ids are positions, resume without gap or duplicate, heartbeats,
slow subscribers cut off with a resync, a leaving client ends its stream quietly."""

from __future__ import annotations

import asyncio
import itertools
import logging
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient

from desktop.events import fanout
from desktop.server.appkeys import EVENTS
from desktop.store.log import Event
from tests.support.sessions import publish_app
from tests.support.sse import durable_events, next_event, stream_ended
from tests.support.wait import wait_for


async def new_session(client: TestClient, auth: dict[str, str]) -> str:
    response = await client.post("/api/session", json={"directory": str(Path.cwd())}, headers=auth)
    return (await response.json())["data"]["id"]  # type: ignore[no-any-return]


def prompt(i: int) -> tuple[str, dict[str, object]]:
    return "session.prompted", {"message_id": f"m{i}", "text": f"t{i}", "mode": "queue"}


async def test_durable_events_arrive_with_their_position_as_id(
    client: TestClient, auth: dict[str, str]
) -> None:
    stream = await client.get("/api/event", headers=auth)
    connected = await next_event(stream)
    assert connected.type == "server.connected"
    assert connected.properties["position"] == 0
    sid = await new_session(client, auth)
    [created] = await durable_events(stream, 1)
    assert created.type == "session.created"
    assert created.id == 1
    assert created.properties["session_id"] == sid
    assert created.properties["seq"] == 1
    [event] = await publish_app(client.app, sid, prompt(1))
    [live] = await durable_events(stream, 1)
    assert live.id == event.position
    assert live.properties == event.to_json()
    stream.close()


async def test_resume_after_a_disconnect_replays_exactly_what_was_missed(
    client: TestClient, auth: dict[str, str]
) -> None:
    sid = await new_session(client, auth)
    stream = await client.get("/api/event", headers=auth)
    await next_event(stream)
    first = await publish_app(client.app, sid, prompt(1), prompt(2))
    seen = await durable_events(stream, 2)
    last_id = seen[-1].id
    stream.close()
    missed: list[Event] = []
    for i in range(3, 8):  # published while nobody listens
        missed += await publish_app(client.app, sid, prompt(i))
    resumed = await client.get("/api/event", headers={**auth, "Last-Event-ID": str(last_id)})
    await next_event(resumed)
    replayed = await durable_events(resumed, len(missed))
    assert [e.id for e in replayed] == [e.position for e in missed]
    live = await publish_app(client.app, sid, prompt(8))
    [after] = await durable_events(resumed, 1)
    assert after.id == live[0].position  # no duplicate of the replayed ones, no gap
    assert [e.position for e in first] == [s.id for s in seen]
    resumed.close()


async def test_the_header_wins_over_after_and_after_alone_resumes_too(
    client: TestClient, auth: dict[str, str]
) -> None:
    sid = await new_session(client, auth)
    events = await publish_app(client.app, sid, prompt(1), prompt(2), prompt(3))
    by_query = await client.get(f"/api/event?after={events[0].position}", headers=auth)
    await next_event(by_query)
    assert [e.id for e in await durable_events(by_query, 2)] == [e.position for e in events[1:]]
    by_query.close()
    both = await client.get(
        f"/api/event?after={events[0].position}",
        headers={**auth, "Last-Event-ID": str(events[1].position)},
    )
    await next_event(both)
    assert [e.id for e in await durable_events(both, 1)] == [events[2].position]
    both.close()


async def test_events_published_during_the_replay_are_neither_lost_nor_doubled(
    client: TestClient, auth: dict[str, str]
) -> None:
    sid = await new_session(client, auth)
    await publish_app(client.app, sid, *[prompt(i) for i in range(1200)])  # > replay pages
    stream = await client.get("/api/event?after=0", headers=auth)
    extra = asyncio.gather(*[publish_app(client.app, sid, prompt(2000 + i)) for i in range(20)])
    await next_event(stream)
    await extra
    received = await durable_events(stream, 1 + 1200 + 20)
    assert [e.id for e in received] == list(range(1, 1 + 1200 + 20 + 1))
    stream.close()


@pytest.mark.parametrize("bad", ["-1", "abc", "1.5", "9" * 30])
async def test_a_bad_resume_position_is_400(
    client: TestClient, auth: dict[str, str], bad: str
) -> None:
    response = await client.get("/api/event", headers={**auth, "Last-Event-ID": bad})
    assert response.status == 400
    assert (await response.json())["error"]["type"] == "request.invalid"


async def test_a_position_this_database_never_gave_is_answered_with_resync(
    client: TestClient, auth: dict[str, str]
) -> None:
    stream = await client.get("/api/event?after=999", headers=auth)
    await next_event(stream)
    resync = await next_event(stream)
    assert resync.type == "server.resync"
    assert resync.properties["reason"] == "unknown_position"
    assert await stream_ended(stream)


async def test_a_subscriber_that_cannot_keep_up_gets_resync_then_resumes_from_the_log(
    client: TestClient, auth: dict[str, str]
) -> None:
    client.app[EVENTS].limit = 16
    sid = await new_session(client, auth)
    stream = await client.get("/api/event", headers=auth)
    await next_event(stream)
    # 200 events in one request: the fan-out queues them at once, past the limit.
    published = await publish_app(client.app, sid, *[prompt(i) for i in range(200)])
    got: list[int] = []
    while True:
        event = await next_event(stream)
        if event.type == "server.resync":
            break
        if event.id is not None:
            got.append(event.id)
    assert event.properties["reason"] == "slow"
    assert await stream_ended(stream)
    assert client.app[EVENTS].subscriber_count == 0
    assert len(got) < len(published)
    resume = await client.get(
        "/api/event", headers={**auth, "Last-Event-ID": str(got[-1] if got else 1)}
    )
    await next_event(resume)
    rest = await durable_events(resume, len(published) - len(got))
    assert got + [e.id for e in rest] == [e.position for e in published]
    resume.close()


async def test_quiet_streams_get_heartbeats(
    client: TestClient, auth: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fanout, "HEARTBEAT_SECONDS", 0.05)
    stream = await client.get("/api/event", headers=auth)
    await next_event(stream)

    async def ping() -> bytes:
        while True:
            line = await stream.content.readline()
            if line.startswith(b":"):
                return line

    assert await asyncio.wait_for(ping(), 5) == b": ping\n"
    stream.close()


async def test_a_client_that_leaves_ends_its_stream_without_a_traceback(
    client: TestClient, auth: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    sid = await new_session(client, auth)
    stream = await client.get("/api/event", headers=auth)
    await next_event(stream)
    assert client.app[EVENTS].subscriber_count == 1
    stream.close()
    fan = client.app[EVENTS]
    published = itertools.count()

    async def gone() -> bool:  # the server writes until it notices the peer is gone
        await publish_app(client.app, sid, prompt(next(published)))
        return bool(fan.subscriber_count == 0)

    await wait_for(gone, what="the stream to notice the client left")
    noisy = [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
    assert noisy == [], [r.getMessage() for r in noisy]


async def test_status_changes_are_announced_once_each(
    client: TestClient, auth: dict[str, str]
) -> None:
    from desktop.server.appkeys import ENGINE
    from tests.support.sessions import started

    stream = await client.get("/api/event", headers=auth)
    await next_event(stream)
    sid = await new_session(client, auth)
    service = client.app[ENGINE].sessions
    await service.set_claim(sid, True)
    await publish_app(
        client.app, sid, started("m1"), ("session.text", {"message_id": "m1", "text": "a"})
    )
    await service.set_claim(sid, False)
    await publish_app(
        client.app,
        sid,
        ("session.step.failed", {"message_id": "m1", "error": {"type": "x", "message": "y"}}),
    )
    await publish_app(client.app, sid, started("m2"))
    statuses: list[str] = []
    while len(statuses) < 5:
        event = await next_event(stream)
        if event.type == "session.status":
            assert event.properties["session_id"] == sid
            statuses.append(event.properties["data"]["status"])
    assert statuses == ["idle", "busy", "idle", "error", "idle"]
    stream.close()
