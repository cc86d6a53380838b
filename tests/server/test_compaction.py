"""No session is stranded by its length: long conversations against the strict fake with a
context window, in process (real app, real SQLite, real sockets)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from desktop.agent import runner as runner_module
from desktop.agent.compaction import SUMMARY_HEADER
from desktop.agent.fitting import COMPACTION_FAILED
from desktop.config import Settings
from desktop.server.app import create_app
from tests.support.app import TOKEN, ClientFactory
from tests.support.compaction import (
    WINDOW,
    is_summary,
    prose,
    refused_summaries,
    summaries,
)
from tests.support.fake_provider import (
    Call,
    FakeProvider,
    Reply,
    overflow_answer,
    text_reply,
    tool_call_reply,
)
from tests.support.runner import (
    configure,
    log,
    messages,
    new_session,
    prompt,
    until_event,
    until_idle,
)


def key(body: Any) -> str:
    return json.dumps(body, sort_keys=True)


async def start(
    aiohttp_client: ClientFactory, settings: Settings, fake: FakeProvider
) -> TestClient:
    configure(settings, fake.base_url)
    return await aiohttp_client(create_app(settings, token=TOKEN))


async def converse(
    agent: TestClient, auth: dict[str, str], fake: FakeProvider, folder: Path, prompts: int,
    size: int = 1500,
) -> str:  # fmt: skip
    """`prompts` prompts, each reading a file of `size` tokens and answering; every one must
    be answered with the session idle (never `error`)."""
    sid = await new_session(agent, auth, str(folder))
    for i in range(prompts):
        (folder / f"notes{i}.txt").write_text(prose(size, i))
        fake.script(
            tool_call_reply(Call(f"call_{i}", "read", {"path": f"notes{i}.txt"})),
            text_reply(f"answer {i}"),
        )
        await prompt(agent, auth, sid, f"Read notes{i}.txt and tell me what it says.")
        await until_event(agent, auth, sid, "session.text", text=f"answer {i}")
        session = await until_idle(agent, auth, sid)
        assert session["status"] == "idle", session
    return sid


def check_requests(fake: FakeProvider) -> None:
    """No malformed request; no refused body sent again; every request fits the tools rule."""
    assert fake.invalid_count == 0, fake.invalid_requests
    refused = {key(fake.requests[i].body) for i in fake.overflows}
    later = [
        key(r.body) for n, r in enumerate(fake.requests) if n not in fake.overflows
    ]  # fmt: skip
    assert not refused & set(later)
    assert len(refused) == len(fake.overflows)


def prompt_of(body: Any) -> str:
    users = [m["content"] for m in body["messages"] if m["role"] == "user"]
    return next((u for u in reversed(users) if u.startswith("Read notes")), "")


@pytest.mark.parametrize("style", ["openai", "groq"])
async def test_ten_prompts_over_an_unknown_window_are_all_answered(
    aiohttp_client: ClientFactory, settings: Settings, web_dist: Path, tmp_path: Path, style: str
) -> None:
    async with FakeProvider(window=WINDOW, overflow=style, route=summaries) as fake:
        agent = await start(aiohttp_client, settings, fake)
        auth = {"Authorization": f"Bearer {TOKEN}"}
        sid = await converse(agent, auth, fake, tmp_path, 10)
        check_requests(fake)
        assert fake.overflows, "the conversation never reached the window"
        per_prompt = [prompt_of(fake.requests[i].body) for i in fake.overflows]
        assert len(per_prompt) == len(set(per_prompt)), per_prompt  # at most one per prompt
        if style == "openai":
            # The first refusal stated the window: none after it.
            assert len(fake.overflows) == 1
        events = await log(agent, auth, sid)
        compactions = [e for e in events if e["type"] == "session.compacted"]
        assert len(compactions) >= 2
        assert not [e for e in events if e["type"] == "session.step.failed"]
        shown = [m["text"] for m in await messages(agent, auth, sid) if m["type"] == "user"]
        assert shown == [f"Read notes{i}.txt and tell me what it says." for i in range(10)]
        session = (await (await agent.get(f"/api/session/{sid}", headers=auth)).json())["data"]
        assert session["context"]["used"] > 0
        if style == "openai":
            assert session["context"]["window"] == WINDOW
        last = fake.requests[-1].body["messages"]
        assert last[1]["content"].startswith(SUMMARY_HEADER)  # the model sees the summary


@pytest.mark.parametrize("field", ["context_length", "context_window", "max_model_len"])
async def test_a_window_the_model_list_states_means_no_overflow_at_all(
    aiohttp_client: ClientFactory, settings: Settings, web_dist: Path, tmp_path: Path, field: str
) -> None:
    models = [{"id": "fake-model", field: WINDOW}]
    async with FakeProvider(window=WINDOW, models=models, route=summaries) as fake:
        agent = await start(aiohttp_client, settings, fake)
        auth = {"Authorization": f"Bearer {TOKEN}"}
        sid = await converse(agent, auth, fake, tmp_path, 8)
        check_requests(fake)
        assert fake.overflows == []
        events = await log(agent, auth, sid)
        assert [e for e in events if e["type"] == "session.compacted"]
        ended = [e["data"] for e in events if e["type"] == "session.step.ended"]
        assert all(e["context"]["window"] == WINDOW for e in ended if "context" in e)
        assert max(e["context"]["used"] for e in ended if "context" in e) < WINDOW


async def test_a_single_tool_output_larger_than_the_window_is_cut_with_a_note(
    aiohttp_client: ClientFactory, settings: Settings, web_dist: Path, tmp_path: Path
) -> None:
    models = [{"id": "fake-model", "max_model_len": WINDOW}]
    async with FakeProvider(window=WINDOW, models=models, route=summaries) as fake:
        agent = await start(aiohttp_client, settings, fake)
        auth = {"Authorization": f"Bearer {TOKEN}"}
        (tmp_path / "huge.txt").write_text(prose(3 * WINDOW, 7))
        sid = await new_session(agent, auth, str(tmp_path))
        fake.script(
            tool_call_reply(Call("call_huge", "read", {"path": "huge.txt"})),
            text_reply("it is long"),
        )
        await prompt(agent, auth, sid, "Read huge.txt")
        await until_event(agent, auth, sid, "session.text", text="it is long")
        assert (await until_idle(agent, auth, sid))["status"] == "idle"
        check_requests(fake)
        assert fake.overflows == []
        tool = next(m for m in fake.requests[-1].body["messages"] if m["role"] == "tool")
        assert "characters cut here" in tool["content"]
        # The person still has the whole output.
        stored = [m for m in await messages(agent, auth, sid) if m["type"] == "assistant"]
        whole = stored[0]["content"][-1]["state"]["content"]
        assert "characters cut here" not in whole
        assert len(whole) > len(tool["content"])


def overflowing_summaries(times: int) -> Callable[[Any], Reply | None]:
    """The first `times` summary requests are refused as too long; later ones answer."""
    return refused_summaries(
        times, Reply(status=400, body=overflow_answer("openai", WINDOW, WINDOW + 10))
    )


async def test_a_summary_request_that_overflows_is_sent_again_in_smaller_pieces(
    aiohttp_client: ClientFactory, settings: Settings, web_dist: Path, tmp_path: Path
) -> None:
    models = [{"id": "fake-model", "context_length": WINDOW}]
    route = overflowing_summaries(1)
    async with FakeProvider(window=WINDOW, models=models, route=route) as fake:
        agent = await start(aiohttp_client, settings, fake)
        auth = {"Authorization": f"Bearer {TOKEN}"}
        await converse(agent, auth, fake, tmp_path, 6)
        check_requests(fake)
        sent = [r.body for r in fake.requests if is_summary(r.body)]
        assert len(sent) >= 2
        assert len(key(sent[1])) < len(key(sent[0]))  # the retry carried a smaller piece


async def test_a_compaction_that_cannot_succeed_ends_the_turn_once_and_the_next_prompt_recovers(
    aiohttp_client: ClientFactory, settings: Settings, web_dist: Path, tmp_path: Path
) -> None:
    models = [{"id": "fake-model", "context_window": WINDOW}]
    # Enough refusals for one compaction's two attempts, whatever step it falls on.
    route = overflowing_summaries(2)
    async with FakeProvider(window=WINDOW, models=models, route=route) as fake:
        agent = await start(aiohttp_client, settings, fake)
        auth = {"Authorization": f"Bearer {TOKEN}"}
        sid = await new_session(agent, auth, str(tmp_path))
        failed_at = None
        for i in range(8):
            (tmp_path / f"notes{i}.txt").write_text(prose(1500, i))
            fake.replies.clear()
            fake.script(
                tool_call_reply(Call(f"call_{i}", "read", {"path": f"notes{i}.txt"})),
                text_reply(f"answer {i}"),
            )
            await prompt(agent, auth, sid, f"Read notes{i}.txt and tell me what it says.")
            session = await until_idle(agent, auth, sid)
            if session["status"] == "error":
                failed_at = i
                break
        assert failed_at is not None, "no compaction was needed"
        events = await log(agent, auth, sid)
        failures = [e["data"] for e in events if e["type"] == "session.step.failed"]
        assert len(failures) == 1
        assert failures[0]["error"]["type"] == COMPACTION_FAILED
        assert "Raise the context window in the settings" in failures[0]["error"]["message"]
        assert "start a new session from a summary" in failures[0]["error"]["message"]
        assert sum(1 for r in fake.requests if is_summary(r.body)) == 2  # never a loop
        # The next prompt tries again from the durable state, and succeeds.
        fake.replies.clear()
        fake.script(text_reply("back on track"))
        await prompt(agent, auth, sid, "Go on.")
        await until_event(agent, auth, sid, "session.text", text="back on track")
        assert (await until_idle(agent, auth, sid))["status"] == "idle"
        check_requests(fake)
        assert fake.overflows == []


async def test_the_session_window_setting_wins_and_compact_now_compacts(
    aiohttp_client: ClientFactory, settings: Settings, web_dist: Path, tmp_path: Path
) -> None:
    async with FakeProvider(window=WINDOW, route=summaries) as fake:
        agent = await start(aiohttp_client, settings, fake)
        auth = {"Authorization": f"Bearer {TOKEN}"}
        sid = await converse(agent, auth, fake, tmp_path, 3, size=800)
        bad = await agent.patch(f"/api/session/{sid}", json={"context_window": -1}, headers=auth)
        assert bad.status == 400
        response = await agent.patch(
            f"/api/session/{sid}", json={"context_window": 6000}, headers=auth
        )
        assert response.status == 200
        assert (await response.json())["data"]["context"]["window"] == 6000
        response = await agent.post(f"/api/session/{sid}/compact", headers=auth)
        assert response.status == 200, await response.text()
        events = await log(agent, auth, sid)
        [compacted] = [e["data"] for e in events if e["type"] == "session.compacted"]
        assert compacted["reason"] == "manual"
        assert compacted["tokens"]["after"] < compacted["tokens"]["before"]
        missing = await agent.post("/api/session/ses_missing/compact", headers=auth)
        assert missing.status == 404


async def test_a_turn_at_its_step_limit_ends_with_a_closing_answer_sent_without_tools(
    aiohttp_client: ClientFactory,
    settings: Settings,
    web_dist: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(runner_module, "MAX_STEPS", 3)
    async with FakeProvider() as fake:
        agent = await start(aiohttp_client, settings, fake)
        auth = {"Authorization": f"Bearer {TOKEN}"}
        (tmp_path / "a.txt").write_text("a\n")
        fake.script(
            *[tool_call_reply(Call(f"call_{i}", "read", {"path": "a.txt"})) for i in range(2)],
            text_reply("Where things stand: read a.txt twice."),
        )
        sid = await new_session(agent, auth, str(tmp_path))
        await prompt(agent, auth, sid, "Keep reading a.txt forever.")
        await until_event(
            agent, auth, sid, "session.text", text="Where things stand: read a.txt twice."
        )
        assert (await until_idle(agent, auth, sid))["status"] == "idle"
        events = await log(agent, auth, sid)
        assert not [e for e in events if e["type"] == "session.step.failed"]
        assert len(fake.requests) == 3
        assert all("tools" in r.body for r in fake.requests[:2])
        last = fake.requests[2].body
        assert "tools" not in last
        assert last["messages"][-1] == {"role": "user", "content": runner_module.MAX_STEPS_PROMPT}
        assert fake.invalid_count == 0


async def test_the_provider_settings_window_and_the_model_list_route(
    aiohttp_client: ClientFactory, settings: Settings, web_dist: Path, tmp_path: Path
) -> None:
    models: list[dict[str, Any]] = [{"id": "fake-model", "max_model_len": 32768}, {"id": "other"}]
    async with FakeProvider(models=models) as fake:
        agent = await start(aiohttp_client, settings, fake)
        auth = {"Authorization": f"Bearer {TOKEN}"}
        listed = await agent.get("/api/config/provider/models", headers=auth)
        assert (await listed.json())["data"] == [
            {"id": "fake-model", "context_window": 32768},
            {"id": "other"},
        ]
        base = {"provider": "openai-compatible", "base_url": fake.base_url, "model": "fake-model"}
        bad = await agent.put(
            "/api/config/provider", json={**base, "context_window": "lots"}, headers=auth
        )
        assert bad.status == 400
        saved = await agent.put(
            "/api/config/provider", json={**base, "context_window": 12000}, headers=auth
        )
        assert (await saved.json())["data"]["context_window"] == 12000
        sid = await new_session(agent, auth, str(tmp_path))
        await prompt(agent, auth, sid, "hello")
        events = await until_event(agent, auth, sid, "session.step.ended")
        ended = next(e["data"] for e in events if e["type"] == "session.step.ended")
        assert ended["context"]["window"] == 12000  # the user's setting beats the model list
    async with FakeProvider() as bare:
        configure(settings, bare.base_url)
        missing = await agent.get("/api/config/provider/models", headers=auth)
        assert missing.status == 502
        assert (await missing.json())["error"]["type"] == "provider.models_unavailable"
