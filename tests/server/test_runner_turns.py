"""The runner end to end in process: real app, real SQLite, the strict fake provider."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from desktop.config import Settings
from desktop.server.app import create_app
from desktop.server.appkeys import ENGINE
from tests.support.app import TOKEN, ClientFactory
from tests.support.fake_provider import (
    Call,
    FakeProvider,
    Reply,
    cut_reply,
    error_reply,
    text_reply,
    tool_call_reply,
)
from tests.support.runner import (
    configure,
    log,
    messages,
    new_session,
    prompt,
    types,
    until_event,
    until_idle,
)


@pytest.fixture
async def agent(
    aiohttp_client: ClientFactory, settings: Settings, web_dist: Path, fake: FakeProvider
) -> TestClient:
    configure(settings, fake.base_url)
    app = create_app(settings, token=TOKEN)
    app[ENGINE].runner.options.retry_scale = 0.01
    return await aiohttp_client(app)


@pytest.fixture
def auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


async def test_a_prompt_is_answered_streamed_and_the_turn_releases_its_claim(
    agent: TestClient, auth: dict[str, str], fake: FakeProvider, tmp_path: Path
) -> None:
    fake.script(text_reply("Hel", "lo ", "there"))
    sid = await new_session(agent, auth, str(tmp_path))
    await prompt(agent, auth, sid, "Say hello\nplease")
    events = await until_event(agent, auth, sid, "session.step.ended")
    session = await until_idle(agent, auth, sid)
    kinds = types(events)
    assert kinds.index("session.input.delivered") < kinds.index("session.step.started")
    assert kinds.index("session.step.started") < kinds.index("session.step.streamed")
    assert [e["data"]["text"] for e in events if e["type"] == "session.text"] == ["Hello there"]
    ended = next(e for e in events if e["type"] == "session.step.ended")["data"]
    assert ended["finish"] == "stop"
    assert ended["tokens"]["input"] == 11
    assert session["status"] == "idle"
    body = fake.requests[0].body
    assert body["messages"][0]["role"] == "system"
    assert "Working directory" in body["messages"][0]["content"]
    assert body["messages"][-1] == {"role": "user", "content": "Say hello\nplease"}
    assert {t["function"]["name"] for t in body["tools"]} >= {"read", "shell", "subagent"}
    await until_event(agent, auth, sid, "session.updated", title="Say hello")
    assert fake.invalid_count == 0


async def test_tool_calls_of_a_step_run_and_the_next_request_pairs_every_result(
    agent: TestClient, auth: dict[str, str], fake: FakeProvider, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    fake.script(
        tool_call_reply(
            Call("call_a", "read", {"path": "a.txt"}),
            Call("call_b", "glob", {"pattern": "*.txt"}),
            Call("call_c", "nope", {}),
            Call("call_d", "read", {"path": 5}),
        ),
        text_reply("done"),
    )
    sid = await new_session(agent, auth, str(tmp_path))
    await prompt(agent, auth, sid, "look")
    await until_event(agent, auth, sid, "session.step.ended", count=2)
    await until_idle(agent, auth, sid)
    second = fake.requests[1].body["messages"]
    assistant = next(m for m in second if m.get("tool_calls"))
    at = second.index(assistant)
    results = second[at + 1 : at + 5]
    assert [r["tool_call_id"] for r in results] == ["call_a", "call_b", "call_c", "call_d"]
    assert "alpha" in results[0]["content"]
    assert "a.txt" in results[1]["content"]
    assert "Unknown tool 'nope'" in results[2]["content"]
    assert "Invalid arguments for read" in results[3]["content"]
    assert fake.invalid_count == 0


async def test_a_retryable_429_is_retried_after_its_retry_after_with_a_scheduled_event(
    agent: TestClient, auth: dict[str, str], fake: FakeProvider, tmp_path: Path
) -> None:
    fake.script(error_reply(429, retry_after_ms="400"), text_reply("ok"))
    sid = await new_session(agent, auth, str(tmp_path))
    started = time.time()
    await prompt(agent, auth, sid, "hi")
    events = await until_event(agent, auth, sid, "session.step.ended")
    retry = next(e for e in events if e["type"] == "session.retry.scheduled")
    assert retry["data"]["attempt"] == 1
    assert retry["data"]["error"]["type"] == "provider.rate_limited"
    # `at` is computed just before the event is stamped: within a few ms of created + 400.
    assert retry["data"]["at"] >= retry["created"] + 390
    streamed = next(e for e in events if e["type"] == "session.step.streamed")
    assert streamed["created"] >= retry["data"]["at"]
    assert time.time() - started >= 0.4
    assert len(fake.requests) == 2
    assert fake.invalid_count == 0


async def test_a_non_retryable_400_fails_the_step_once_and_the_session_stays_usable(
    agent: TestClient, auth: dict[str, str], fake: FakeProvider, tmp_path: Path
) -> None:
    fake.script(
        error_reply(400, "bad model", error_type="invalid_request_error"), text_reply("fine")
    )
    sid = await new_session(agent, auth, str(tmp_path))
    await prompt(agent, auth, sid, "one")
    events = await until_event(agent, auth, sid, "session.step.failed")
    assert (await until_idle(agent, auth, sid))["status"] == "error"
    assert len(fake.requests) == 1
    failed = next(e for e in events if e["type"] == "session.step.failed")
    assert failed["data"]["error"]["type"] == "provider.bad_request"
    await prompt(agent, auth, sid, "two")
    await until_event(agent, auth, sid, "session.step.ended")
    assert (await until_idle(agent, auth, sid))["status"] == "idle"
    assert len(fake.requests) == 2
    assert fake.invalid_count == 0


async def test_a_preflight_violation_fails_the_step_naming_the_index_and_sends_nothing(
    agent: TestClient,
    auth: dict[str, str],
    fake: FakeProvider,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(messages: Any, options: Any = None) -> list[dict[str, Any]]:
        return [
            {"role": "user", "content": "x"},
            {"role": "tool", "tool_call_id": "c", "content": "y"},
        ]

    monkeypatch.setattr("desktop.agent.step.lower_messages", broken)
    sid = await new_session(agent, auth, str(tmp_path))
    await prompt(agent, auth, sid, "hi")
    events = await until_event(agent, auth, sid, "session.step.failed")
    error = next(e for e in events if e["type"] == "session.step.failed")["data"]["error"]
    assert error["type"] == "internal.preflight"
    assert "messages[1]" in error["message"]
    assert (await until_idle(agent, auth, sid))["status"] == "error"
    assert fake.requests == []


async def test_a_stream_cut_mid_output_continues_from_the_partial_answer(
    agent: TestClient, auth: dict[str, str], fake: FakeProvider, tmp_path: Path
) -> None:
    fake.script(cut_reply("partial "), text_reply("rest"))
    sid = await new_session(agent, auth, str(tmp_path))
    await prompt(agent, auth, sid, "go")
    events = await until_event(agent, auth, sid, "session.step.ended", count=2)
    await until_idle(agent, auth, sid)
    finishes = [e["data"]["finish"] for e in events if e["type"] == "session.step.ended"]
    assert finishes == ["cut", "stop"]
    assert fake.requests[1].body["messages"][-1] == {"role": "assistant", "content": "partial "}
    assert fake.requests[0].body != fake.requests[1].body
    assert fake.invalid_count == 0


async def test_an_interrupt_during_streaming_keeps_the_text_and_ends_the_turn_for_good(
    agent: TestClient, auth: dict[str, str], fake: FakeProvider, tmp_path: Path
) -> None:
    gate = asyncio.Event()
    reply = text_reply("before ", "after")
    reply.gate, reply.gate_after = gate, 2
    fake.script(reply)
    sid = await new_session(agent, auth, str(tmp_path))
    await prompt(agent, auth, sid, "go")
    await until_event(agent, auth, sid, "session.step.streamed")
    response = await agent.post(f"/api/session/{sid}/interrupt", headers=auth)
    assert (await response.json())["data"] == {"interrupted": True}
    gate.set()
    events = await until_event(agent, auth, sid, "session.execution.interrupted", reason="user")
    assert (await until_idle(agent, auth, sid))["status"] == "idle"
    assert [e["data"]["text"] for e in events if e["type"] == "session.text"] == ["before "]
    ended = [e["data"]["finish"] for e in events if e["type"] == "session.step.ended"]
    assert ended == ["interrupted"]
    again = await agent.post(f"/api/session/{sid}/interrupt", headers=auth)
    assert (await again.json())["data"] == {"interrupted": False}
    assert len(fake.requests) == 1


async def test_input_queued_during_a_turn_is_delivered_after_the_answer_in_order(
    agent: TestClient, auth: dict[str, str], fake: FakeProvider, tmp_path: Path
) -> None:
    gate = asyncio.Event()
    first = text_reply("first answer")
    first.gate, first.gate_after = gate, 2
    fake.script(first, text_reply("second answer"))
    sid = await new_session(agent, auth, str(tmp_path))
    await prompt(agent, auth, sid, "one")
    await until_event(agent, auth, sid, "session.step.streamed")
    await prompt(agent, auth, sid, "two")
    gate.set()
    await until_event(agent, auth, sid, "session.step.ended", count=2)
    await until_idle(agent, auth, sid)
    roles = [(m["role"], m.get("content")) for m in fake.requests[1].body["messages"][1:]]
    assert roles == [("user", "one"), ("assistant", "first answer"), ("user", "two")]
    shown = [m.get("text") or m["content"][0]["text"] for m in await messages(agent, auth, sid)]
    assert shown == ["one", "first answer", "two", "second answer"]
    assert fake.invalid_count == 0


async def test_without_a_provider_the_step_fails_durably_with_a_clear_error(
    aiohttp_client: ClientFactory,
    settings: Settings,
    web_dist: Path,
    auth: dict[str, str],
    tmp_path: Path,
) -> None:
    client = await aiohttp_client(create_app(settings, token=TOKEN))
    sid = await new_session(client, auth, str(tmp_path))
    await prompt(client, auth, sid, "hi")
    events = await until_event(client, auth, sid, "session.step.failed")
    error = next(e for e in events if e["type"] == "session.step.failed")["data"]["error"]
    assert error["type"] == "provider.not_configured"
    assert "PUT /api/config/provider" in error["message"]
    assert (await until_idle(client, auth, sid))["status"] == "error"


async def test_ask_mode_waits_for_the_person_and_a_denial_is_the_calls_result(
    agent: TestClient, auth: dict[str, str], fake: FakeProvider, tmp_path: Path
) -> None:
    fake.script(
        tool_call_reply(Call("call_w", "write", {"path": "x.txt", "content": "hi"})),
        tool_call_reply(Call("call_v", "write", {"path": "y.txt", "content": "yo"})),
        text_reply("ok"),
    )
    sid = await new_session(agent, auth, str(tmp_path))
    patched = await agent.patch(
        f"/api/session/{sid}", json={"permission_mode": "ask"}, headers=auth
    )
    assert (await patched.json())["data"]["permission_mode"] == "ask"
    bad = await agent.patch(f"/api/session/{sid}", json={"permission_mode": "yolo"}, headers=auth)
    assert bad.status == 400
    await prompt(agent, auth, sid, "write")
    await until_event(agent, auth, sid, "session.permission.asked", call_id="call_w")
    pending = (await (await agent.get(f"/api/session/{sid}/permission", headers=auth)).json())[
        "data"
    ]
    assert [(p["call_id"], p["tool"], p["diff"]) for p in pending] == [("call_w", "write", "hi")]
    assert len(fake.requests) == 1
    assert not (tmp_path / "x.txt").exists()
    wrong = await agent.post(
        f"/api/session/{sid}/permission/call_w", json={"reply": "maybe"}, headers=auth
    )
    assert wrong.status == 400
    denied = await agent.post(
        f"/api/session/{sid}/permission/call_w", json={"reply": "deny"}, headers=auth
    )
    assert denied.status == 200
    twice = await agent.post(
        f"/api/session/{sid}/permission/call_w", json={"reply": "once"}, headers=auth
    )
    assert twice.status == 404
    await until_event(agent, auth, sid, "session.permission.asked", call_id="call_v")
    await agent.post(f"/api/session/{sid}/permission/call_v", json={"reply": "once"}, headers=auth)
    await until_event(agent, auth, sid, "session.step.ended", count=3)
    await until_idle(agent, auth, sid)
    second = fake.requests[1].body["messages"]
    result = next(m for m in second if m["role"] == "tool")
    assert result["tool_call_id"] == "call_w"
    assert "denied by the user" in result["content"]
    assert not (tmp_path / "x.txt").exists()
    assert (tmp_path / "y.txt").read_text() == "yo"
    assert fake.invalid_count == 0


async def test_subagent_runs_a_child_session_whose_last_answer_is_the_result(
    agent: TestClient, auth: dict[str, str], fake: FakeProvider, tmp_path: Path
) -> None:
    fake.script(
        tool_call_reply(Call("call_s", "subagent", {"description": "count", "prompt": "count"})),
        text_reply("child says 3"),
        text_reply("parent done"),
    )
    sid = await new_session(agent, auth, str(tmp_path))
    await prompt(agent, auth, sid, "delegate")
    await until_event(agent, auth, sid, "session.step.ended", count=2)
    await until_idle(agent, auth, sid)
    sessions = (await (await agent.get("/api/session", headers=auth)).json())["data"]
    child = next(s for s in sessions if s["parent_id"] == sid)
    assert child["status"] == "idle"
    third = fake.requests[2].body["messages"]
    result = next(m for m in third if m["role"] == "tool")
    assert result["content"] == f"child says 3\n\n(helper session_id: {child['id']})"
    assert fake.invalid_count == 0
    assert types(await log(agent, auth, child["id"]))[0] == "session.created"


async def test_a_waiting_permission_survives_a_restart_and_is_answered_once(
    aiohttp_client: ClientFactory,
    settings: Settings,
    web_dist: Path,
    auth: dict[str, str],
    fake: FakeProvider,
    tmp_path: Path,
) -> None:
    configure(settings, fake.base_url)
    fake.script(
        tool_call_reply(Call("call_w", "write", {"path": "x.txt", "content": "hi"})),
        text_reply("ok"),
    )
    first = await aiohttp_client(create_app(settings, token=TOKEN))
    sid = await new_session(first, auth, str(tmp_path))
    await first.patch(f"/api/session/{sid}", json={"permission_mode": "ask"}, headers=auth)
    await prompt(first, auth, sid, "write")
    await until_event(first, auth, sid, "session.permission.asked", call_id="call_w")
    await first.close()  # the service stops: the claim stays, the question stays
    second = await aiohttp_client(create_app(settings, token=TOKEN))
    pending = (await (await second.get(f"/api/session/{sid}/permission", headers=auth)).json())[
        "data"
    ]
    assert [p["call_id"] for p in pending] == ["call_w"]
    assert (await until_idle_or_busy(second, auth, sid)) == "busy"
    reply = {"reply": "session"}
    answered = await second.post(f"/api/session/{sid}/permission/call_w", json=reply, headers=auth)
    assert answered.status == 200
    events = await until_event(second, auth, sid, "session.step.ended", count=2)
    await until_idle(second, auth, sid)
    assert types(events).count("session.permission.asked") == 1
    assert (tmp_path / "x.txt").read_text() == "hi"
    assert len(fake.requests) == 2
    assert fake.invalid_count == 0


async def until_idle_or_busy(client: TestClient, auth: dict[str, str], sid: str) -> str:
    session = (await (await client.get(f"/api/session/{sid}", headers=auth)).json())["data"]
    return str(session["status"])


async def sse_frames(
    client: TestClient, auth: dict[str, str], until: str
) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """(type, properties) of every /api/event frame, until one of type `until` is read."""
    async with client.get("/api/event", headers=auth) as stream:
        while True:
            line = await asyncio.wait_for(stream.content.readline(), 30)
            assert line, "the event stream ended"
            if not line.startswith(b"data: "):
                continue
            frame = json.loads(line[6:])
            yield frame["type"], frame["properties"]
            if frame["type"] == until:
                return


async def test_deltas_read_in_one_burst_reach_the_page_as_one_event_before_the_durable_text(
    agent: TestClient, auth: dict[str, str], fake: FakeProvider, tmp_path: Path
) -> None:
    pieces = [f"w{i} " for i in range(40)]
    burst = text_reply(*pieces)
    # The whole answer in one network write: the service reads it in one go.
    fake.script(Reply([b"".join(burst.chunks)]))
    sid = await new_session(agent, auth, str(tmp_path))
    frames = sse_frames(agent, auth, "session.step.ended")
    seen: list[tuple[str, dict[str, Any]]] = [await anext(frames)]  # server.connected
    await prompt(agent, auth, sid, "go")
    seen += [frame async for frame in frames]
    kinds = [kind for kind, _ in seen]
    deltas = [p["data"]["delta"] for kind, p in seen if kind == "session.text.delta"]
    assert "".join(deltas) == "".join(pieces)
    assert len(deltas) < len(pieces) / 4, deltas
    last_delta = max(i for i, kind in enumerate(kinds) if kind == "session.text.delta")
    assert last_delta < kinds.index("session.text")
    assert fake.invalid_count == 0


async def test_deltas_are_not_held_back_until_the_stream_ends(
    agent: TestClient, auth: dict[str, str], fake: FakeProvider, tmp_path: Path
) -> None:
    reply = text_reply("first ", "words ", "then more")
    gate = asyncio.Event()
    reply.gate, reply.gate_after = gate, 3  # role chunk and two words out, then it waits
    fake.script(reply)
    sid = await new_session(agent, auth, str(tmp_path))
    frames = sse_frames(agent, auth, "session.step.ended")
    await anext(frames)
    await prompt(agent, auth, sid, "go")
    shown = ""
    while shown != "first words ":
        kind, properties = await anext(frames)
        assert kind != "session.text", "the durable text came before the live words"
        if kind == "session.text.delta":
            shown += properties["data"]["delta"]
    gate.set()
    rest = [frame async for frame in frames]
    texts = [p["data"]["text"] for kind, p in rest if kind == "session.text"]
    assert texts == ["first words then more"]
