"""Cancelling a queued prompt (DELETE /api/session/{id}/prompt/{message_id}) against the real
app, runner and SQLite with the strict fake provider: a cancelled prompt never reaches the
model, a delivered one cannot be cancelled, bad requests change nothing, and a cancel that
lands while the runner is about to deliver the prompt wins cleanly."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from desktop.server.appkeys import ENGINE
from tests.support.fake_provider import FakeProvider, text_reply
from tests.support.runner import log, messages, new_session, prompt, until_event, until_idle


async def cancel(agent: TestClient, auth: dict[str, str], sid: str, mid: str) -> tuple[int, Any]:
    response = await agent.delete(f"/api/session/{sid}/prompt/{mid}", headers=auth)
    body = None if response.status == 204 else await response.json()
    return response.status, body


def users(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


async def test_a_queued_prompt_cancelled_before_delivery_never_reaches_the_model(
    agent: TestClient, auth: dict[str, str], fake: FakeProvider, tmp_path: Path
) -> None:
    gate = asyncio.Event()
    first = text_reply("first answer")
    first.gate, first.gate_after = gate, 2
    fake.script(first, text_reply("third answer"))
    sid = await new_session(agent, auth, str(tmp_path))
    await prompt(agent, auth, sid, "one")
    await until_event(agent, auth, sid, "session.step.streamed")
    two = await prompt(agent, auth, sid, "two")
    three = await prompt(agent, auth, sid, "three")
    # A page read says which prompts still wait for delivery.
    waiting = {m["id"] for m in await messages(agent, auth, sid) if m.get("queued")}
    assert waiting == {two, three}

    assert await cancel(agent, auth, sid, two) == (204, None)

    events = await log(agent, auth, sid)
    cancelled = [e for e in events if e["type"] == "session.input.cancelled"]
    assert [e["data"] for e in cancelled] == [{"message_id": two}]
    assert two not in [m["id"] for m in await messages(agent, auth, sid)]
    gate.set()
    await until_event(agent, auth, sid, "session.step.ended", count=2)
    assert (await until_idle(agent, auth, sid))["status"] == "idle"
    assert users(fake.requests[1].body) == ["one", "three"]
    listed = await messages(agent, auth, sid)
    shown = [m.get("text") or m["content"][0]["text"] for m in listed]
    assert shown == ["one", "first answer", "three", "third answer"]
    assert not any(m.get("queued") for m in listed)  # delivered: no longer waiting
    assert fake.invalid_count == 0


async def test_a_delivered_prompt_cannot_be_cancelled_409_and_nothing_changes(
    agent: TestClient, auth: dict[str, str], fake: FakeProvider, tmp_path: Path
) -> None:
    fake.script(text_reply("done"))
    sid = await new_session(agent, auth, str(tmp_path))
    mid = await prompt(agent, auth, sid, "hello")
    await until_event(agent, auth, sid, "session.step.ended")
    await until_idle(agent, auth, sid)
    before = await log(agent, auth, sid)

    status, body = await cancel(agent, auth, sid, mid)

    assert status == 409
    assert body["error"]["type"] == "session.prompt_delivered"
    assert "already sent to the model" in body["error"]["message"]
    assert await log(agent, auth, sid) == before
    assert next(m["id"] for m in await messages(agent, auth, sid)) == mid


async def test_bad_cancels_are_4xx_with_clear_words_and_change_nothing(
    agent: TestClient, auth: dict[str, str], fake: FakeProvider, tmp_path: Path
) -> None:
    gate = asyncio.Event()
    held = text_reply("held")
    held.gate, held.gate_after = gate, 2
    fake.script(held, text_reply("later"))
    sid = await new_session(agent, auth, str(tmp_path))
    other = await new_session(agent, auth, str(tmp_path))
    await prompt(agent, auth, sid, "one")
    await until_event(agent, auth, sid, "session.step.streamed")
    queued = await prompt(agent, auth, sid, "two")
    answer = next(m["id"] for m in await messages(agent, auth, sid) if m["type"] == "assistant")
    before = await log(agent, auth, sid)

    cases = [
        ("ses_nope", queued, 404, "session.not_found"),
        (sid, "msg_nope", 404, "session.message_not_found"),
        (sid, "bad%20id!", 404, "session.message_not_found"),
        (other, queued, 404, "session.message_not_found"),  # another session's prompt
        (sid, answer, 400, "session.message_not_user"),
    ]
    for session, message, status, kind in cases:
        got, body = await cancel(agent, auth, session, message)
        assert (got, body["error"]["type"]) == (status, kind), (session, message, body)
        assert body["error"]["message"].endswith(".")
    response = await agent.delete(f"/api/session/{sid}/prompt/{queued}")  # no token
    assert response.status == 401
    assert await log(agent, auth, sid) == before

    # Cancelled once, a second cancel finds nothing.
    assert (await cancel(agent, auth, sid, queued))[0] == 204
    assert (await cancel(agent, auth, sid, queued))[0] == 404
    gate.set()
    await until_idle(agent, auth, sid)
    assert len(fake.requests) == 1  # only "one" was ever sent


async def test_a_cancel_while_the_runner_is_about_to_deliver_wins_and_the_turn_ends_cleanly(
    agent: TestClient, auth: dict[str, str], fake: FakeProvider, tmp_path: Path
) -> None:
    """The runner has read the queued prompt and is preparing the request that carries it
    (held here) when the cancel lands: its delivery is refused, it reads again, finds nothing
    waiting and ends the turn; nothing reaches the model and no failure is recorded."""
    gate = asyncio.Event()
    first = text_reply("first answer")
    first.gate, first.gate_after = gate, 2
    fake.script(first, text_reply("never"))
    app = agent.app
    assert app is not None
    runner = app[ENGINE].runner
    prepare = runner.fitter.prepare
    reached, release = asyncio.Event(), asyncio.Event()

    async def held_prepare(*args: Any, **kw: Any) -> Any:
        pending = kw["pending"] if "pending" in kw else args[4]
        if pending:  # the request delivers waiting input
            reached.set()
            await release.wait()
        return await prepare(*args, **kw)

    sid = await new_session(agent, auth, str(tmp_path))
    await prompt(agent, auth, sid, "one")
    await until_event(agent, auth, sid, "session.step.streamed")
    runner.fitter.prepare = held_prepare  # "one" is already prepared; "two" will be held
    two = await prompt(agent, auth, sid, "two")
    gate.set()
    await asyncio.wait_for(reached.wait(), 30)

    assert await cancel(agent, auth, sid, two) == (204, None)
    release.set()

    session = await until_idle(agent, auth, sid)
    assert session["status"] == "idle"
    events = await log(agent, auth, sid)
    kinds = [e["type"] for e in events]
    assert "session.step.failed" not in kinds
    delivered = [e["data"]["message_id"] for e in events if e["type"] == "session.input.delivered"]
    assert two not in delivered
    assert len(fake.requests) == 1
    assert [m["id"] for m in await messages(agent, auth, sid)][-1] != two


async def test_cancel_racing_delivery_either_wins_whole(
    agent: TestClient, auth: dict[str, str], fake: FakeProvider, tmp_path: Path
) -> None:
    """Cancels sent at the moment the turn ends and delivers the queued prompt: each time
    either the cancel won (204, the model never saw the prompt, its message is gone) or the
    delivery did (409, the model saw it, its message stays): never half of each."""
    outcomes: set[int] = set()
    for n in range(8):
        gate = asyncio.Event()
        first = text_reply("first")
        first.gate, first.gate_after = gate, 2
        fake.script(first, text_reply("second"))
        sid = await new_session(agent, auth, str(tmp_path))
        await prompt(agent, auth, sid, "one")
        await until_event(agent, auth, sid, "session.step.streamed")
        text = f"race {n}"
        mid = await prompt(agent, auth, sid, text)
        seen = len(fake.requests)
        gate.set()
        for _ in range(n):  # a different moment each round
            await asyncio.sleep(0)
        status, _ = await cancel(agent, auth, sid, mid)
        if status == 409:
            await until_event(agent, auth, sid, "session.step.ended", count=2)
        await until_idle(agent, auth, sid)
        sent = [users(r.body) for r in fake.requests[seen:]]
        shown = [m["id"] for m in await messages(agent, auth, sid)]
        if status == 204:
            assert all(text not in u for u in sent)
            assert mid not in shown
            fake.replies.clear()  # the second reply was never asked for
        else:
            assert status == 409
            assert any(text in u for u in sent)
            assert mid in shown
        outcomes.add(status)
    assert outcomes <= {204, 409}
    assert fake.invalid_count == 0
