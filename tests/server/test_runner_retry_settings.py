"""A retry waiting out its back-off uses the settings of the moment: a person who fixes the
provider settings or the session's model during the countdown sees the turn go at once, with
them. Real app, real SQLite, the strict fake provider (two of them for a new URL)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from tests.support.agent_app import AUTH
from tests.support.fake_provider import FakeProvider, Reply, error_reply, text_reply
from tests.support.runner import new_session, prompt, until_event, until_idle

LONG = "60"  # seconds of retry-after: a turn still waiting it out fails the test's deadline


def busy(model: str) -> Any:
    """A provider that rate-limits `model` for a minute and answers any other."""

    def route(body: Any) -> Reply | None:
        return error_reply(429, retry_after=LONG) if body["model"] == model else None

    return route


async def test_a_countdown_goes_at_once_to_the_url_and_key_put_in_the_settings(
    agent: TestClient, fake: FakeProvider, tmp_path: Path
) -> None:
    fake.route = lambda body: error_reply(429, retry_after=LONG)
    async with FakeProvider(api_key="new-key") as fixed:
        fixed.script(text_reply("Answered ", "by the new one"))
        sid = await new_session(agent, AUTH, str(tmp_path))
        await prompt(agent, AUTH, sid, "hi")
        await until_event(agent, AUTH, sid, "session.retry.scheduled")
        settings = {
            "provider": "openai-compatible",
            "base_url": fixed.base_url,
            "model": "fake-model",
            "api_key": "new-key",
        }
        response = await agent.put("/api/config/provider", json=settings, headers=AUTH)
        assert response.status == 200, await response.text()
        events = await until_event(agent, AUTH, sid, "session.step.ended")
        session = await until_idle(agent, AUTH, sid)
    assert [e["data"]["text"] for e in events if e["type"] == "session.text"] == [
        "Answered by the new one"
    ]
    assert not [e for e in events if e["type"] == "session.step.failed"]
    assert session["status"] == "idle"
    assert len(fake.requests) == 1
    assert [r.status for r in fixed.requests] == [200]
    assert fixed.requests[0].headers["Authorization"] == "Bearer new-key"
    assert fake.invalid_count == fixed.invalid_count == 0


async def test_a_countdown_goes_at_once_with_the_model_the_session_was_given(
    agent: TestClient, fake: FakeProvider, tmp_path: Path
) -> None:
    fake.route = busy("fake-model")
    fake.script(text_reply("calm"))
    sid = await new_session(agent, AUTH, str(tmp_path))
    await prompt(agent, AUTH, sid, "hi")
    await until_event(agent, AUTH, sid, "session.retry.scheduled")
    patch = {"model": "calm-model"}
    response = await agent.patch(f"/api/session/{sid}", json=patch, headers=AUTH)
    assert response.status == 200, await response.text()
    events = await until_event(agent, AUTH, sid, "session.step.ended")
    await until_idle(agent, AUTH, sid)
    assert [r.body["model"] for r in fake.requests] == ["fake-model", "calm-model"]
    # The step's message restarts with the model it was answered by.
    started = [e["data"] for e in events if e["type"] == "session.step.started"]
    assert [s["model"]["id"] for s in started] == ["fake-model", "calm-model"]
    assert started[0]["message_id"] == started[1]["message_id"]
    response = await agent.get(f"/api/session/{sid}/message", headers=AUTH)
    answer = [m for m in (await response.json())["data"] if m["type"] == "assistant"]
    assert [m["model"]["id"] for m in answer] == ["calm-model"]
    assert fake.invalid_count == 0


async def test_a_change_to_another_sessions_model_leaves_the_countdown_to_its_time(
    agent: TestClient, fake: FakeProvider, tmp_path: Path
) -> None:
    fake.script(error_reply(429, retry_after_ms="1500"), text_reply("ok"))
    sid = await new_session(agent, AUTH, str(tmp_path))
    other = await new_session(agent, AUTH, str(tmp_path))
    await prompt(agent, AUTH, sid, "hi")
    scheduled = await until_event(agent, AUTH, sid, "session.retry.scheduled")
    at = next(e for e in scheduled if e["type"] == "session.retry.scheduled")["data"]["at"]
    patch = {"model": "calm-model"}
    response = await agent.patch(f"/api/session/{other}", json=patch, headers=AUTH)
    assert response.status == 200, await response.text()
    events = await until_event(agent, AUTH, sid, "session.step.ended")
    streamed = next(e for e in events if e["type"] == "session.step.streamed")
    assert streamed["created"] >= at
    assert [r.body["model"] for r in fake.requests] == ["fake-model", "fake-model"]
