"""A session's own model, reasoning effort and window: set through PATCH /api/session/{id},
shown in the session, carried by its requests and by its subagents' (the strict fake)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from desktop.config import Settings
from desktop.provider.settings import ProviderConfigStore, parse_update
from tests.support.app import TOKEN
from tests.support.fake_provider import Call, FakeProvider, text_reply, tool_call_reply
from tests.support.runner import log, new_session, prompt, until_idle

AUTH = {"Authorization": f"Bearer {TOKEN}"}


async def patch(client: TestClient, sid: str, body: dict[str, Any]) -> tuple[int, Any]:
    response = await client.patch(f"/api/session/{sid}", json=body, headers=AUTH)
    return response.status, await response.json()


async def session(client: TestClient, sid: str) -> dict[str, Any]:
    response = await client.get(f"/api/session/{sid}", headers=AUTH)
    return dict((await response.json())["data"])


def sent(body: dict[str, Any]) -> tuple[str, str | None]:
    return body["model"], body.get("reasoning_effort")


async def test_two_sessions_send_their_own_model_and_effort(
    agent: TestClient, fake: FakeProvider, tmp_path: Path
) -> None:
    first = await new_session(agent, AUTH, str(tmp_path))
    second = await new_session(agent, AUTH, str(tmp_path))
    status, answer = await patch(agent, first, {"model": "big-model", "reasoning_effort": "low"})
    assert status == 200, answer
    assert answer["data"]["model"]["id"] == "big-model"
    assert answer["data"]["model"]["reasoning_effort"] == "low"
    status, _ = await patch(agent, second, {"reasoning_effort": "high", "context_window": 50000})
    assert status == 200
    shown = await session(agent, second)
    assert (shown["model"].get("reasoning_effort"), shown["context"]["window"]) == ("high", 50000)
    await prompt(agent, AUTH, first, "one")
    await until_idle(agent, AUTH, first)
    await prompt(agent, AUTH, second, "two")
    await until_idle(agent, AUTH, second)
    assert [sent(r.body) for r in fake.requests] == [("big-model", "low"), ("fake-model", "high")]
    # Back to the provider's model, the effort kept.
    status, _ = await patch(agent, first, {"model": None})
    assert status == 200
    await prompt(agent, AUTH, first, "three")
    await until_idle(agent, AUTH, first)
    assert sent(fake.requests[-1].body) == ("fake-model", "low")
    assert fake.invalid_count == 0


async def test_a_bad_effort_or_model_is_400_and_changes_nothing(
    agent: TestClient, tmp_path: Path
) -> None:
    sid = await new_session(agent, AUTH, str(tmp_path))
    status, _ = await patch(agent, sid, {"model": "m1", "reasoning_effort": "medium"})
    assert status == 200
    before, events = await session(agent, sid), len(await log(agent, AUTH, sid))
    for body in (
        {"reasoning_effort": "extreme"},
        {"reasoning_effort": 3},
        {"model": "m2", "reasoning_effort": "max"},
        {"model": ""},
        {"model": 42},
        {"model": "a\nb"},
        {"model": "x" * 300},
        {"title": "t", "reasoning_effort": "HIGH"},
    ):
        status, answer = await patch(agent, sid, body)
        assert status == 400, body
        assert answer["error"]["type"] == "request.invalid"
    assert await session(agent, sid) == before
    assert len(await log(agent, AUTH, sid)) == events


async def test_a_subagent_works_with_its_parents_model_and_effort(
    agent: TestClient, fake: FakeProvider, tmp_path: Path
) -> None:
    fake.script(
        tool_call_reply(Call("c_s", "subagent", {"description": "help", "prompt": "help"})),
        text_reply("helped"),
        text_reply("done"),
    )
    sid = await new_session(agent, AUTH, str(tmp_path))
    status, _ = await patch(agent, sid, {"model": "parent-model", "reasoning_effort": "medium"})
    assert status == 200
    await prompt(agent, AUTH, sid, "go")
    await until_idle(agent, AUTH, sid)
    assert [sent(r.body) for r in fake.requests] == [("parent-model", "medium")] * 3
    listed = (await (await agent.get("/api/session", headers=AUTH)).json())["data"]
    [child] = [s for s in listed if s["parent_id"] == sid]
    assert child["model"]["id"] == "parent-model"


async def test_the_provider_settings_reach_effort_and_groq_include_reasoning(
    agent: TestClient, fake: FakeProvider, settings: Settings, tmp_path: Path
) -> None:
    ProviderConfigStore(settings).save(
        parse_update(
            {
                "provider": "groq",
                "base_url": fake.base_url,
                "model": "openai/gpt-oss-20b",
                "reasoning_effort": "high",
                "include_reasoning": False,
            }
        )
    )
    response = await agent.get("/api/config/provider", headers=AUTH)
    public = (await response.json())["data"]
    assert (public["reasoning_effort"], public["include_reasoning"]) == ("high", False)
    sid = await new_session(agent, AUTH, str(tmp_path))
    await prompt(agent, AUTH, sid, "go")
    await until_idle(agent, AUTH, sid)
    body = fake.requests[0].body
    assert (body["reasoning_effort"], body["include_reasoning"]) == ("high", False)
    response = await agent.put(
        "/api/config/provider",
        json={"provider": "groq", "model": "m", "reasoning_effort": "huge"},
        headers=AUTH,
    )
    assert response.status == 400
