"""A compaction's summary request refused with a 429 or a 5xx is retried as a turn's step is:
after the back-off (honouring retry-after), announced by a `session.retry.scheduled`, and the
compaction goes through. Real app, real SQLite, the strict fake provider."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient

from desktop.config import Settings
from desktop.server.app import create_app
from desktop.server.appkeys import ENGINE
from tests.support.agent_app import AUTH
from tests.support.app import TOKEN, ClientFactory
from tests.support.compaction import SUMMARY, WINDOW, is_summary, prose, refused_summaries
from tests.support.fake_provider import (
    Call,
    FakeProvider,
    error_reply,
    text_reply,
    tool_call_reply,
)
from tests.support.host import stop_host
from tests.support.runner import configure, log, new_session, prompt, until_event, until_idle


@pytest.fixture
async def service(
    aiohttp_client: ClientFactory, settings: Settings, web_dist: Path, fake: FakeProvider
) -> AsyncIterator[TestClient]:
    configure(settings, fake.base_url)
    app = create_app(settings, token=TOKEN)
    app[ENGINE].runner.options.retry_scale = 0.01
    yield await aiohttp_client(app)
    await stop_host(settings)


async def read_notes(
    agent: TestClient, fake: FakeProvider, folder: Path, sid: str, count: int
) -> None:
    """`count` answered prompts that each read a file of 1,500 tokens."""
    for i in range(count):
        (folder / f"notes{i}.txt").write_text(prose(1500, i))
        fake.script(
            tool_call_reply(Call(f"call_{i}", "read", {"path": f"notes{i}.txt"})),
            text_reply(f"answer {i}"),
        )
        await prompt(agent, AUTH, sid, f"Read notes{i}.txt")
        await until_event(agent, AUTH, sid, "session.text", text=f"answer {i}")
        assert (await until_idle(agent, AUTH, sid))["status"] == "idle"


async def test_compact_now_retries_a_rate_limited_summary_after_its_retry_after(
    service: TestClient, fake: FakeProvider, tmp_path: Path
) -> None:
    sid = await new_session(service, AUTH, str(tmp_path))
    await read_notes(service, fake, tmp_path, sid, 3)
    fake.route = refused_summaries(1, error_reply(429, retry_after_ms="300"))
    response = await service.post(f"/api/session/{sid}/compact", headers=AUTH)
    assert response.status == 200, await response.text()
    events = await log(service, AUTH, sid)
    retry = next(e for e in events if e["type"] == "session.retry.scheduled")
    assert retry["data"]["attempt"] == 1
    assert retry["data"]["error"]["type"] == "provider.rate_limited"
    assert "message_id" not in retry["data"]  # no step: the compaction's own request
    assert retry["data"]["at"] >= retry["created"] + 290
    compacted = next(e for e in events if e["type"] == "session.compacted")
    assert compacted["data"]["summary"] == SUMMARY
    assert compacted["created"] >= retry["data"]["at"]
    sent = [r for r in fake.requests if is_summary(r.body)]
    assert [r.status for r in sent] == [429, 200]
    assert sent[0].body == sent[1].body  # the same request again
    assert fake.invalid_count == 0


async def test_a_turns_compaction_retries_a_failing_summary_and_the_turn_is_answered(
    service: TestClient, fake: FakeProvider, tmp_path: Path
) -> None:
    fake.window = WINDOW  # counted and reported by the fake, stated by its model list
    fake.models = [{"id": "fake-model", "context_length": WINDOW}]
    sid = await new_session(service, AUTH, str(tmp_path))
    fake.route = refused_summaries(
        1, error_reply(503, "Upstream overloaded", error_type="server_error")
    )
    await read_notes(service, fake, tmp_path, sid, 6)
    events = await log(service, AUTH, sid)
    assert [e for e in events if e["type"] == "session.compacted"]
    retries = [e["data"] for e in events if e["type"] == "session.retry.scheduled"]
    assert [r["error"]["type"] for r in retries] == ["provider.server_error"]
    assert not [e for e in events if e["type"] == "session.step.failed"]
    assert [r.status for r in fake.requests if is_summary(r.body)][:2] == [503, 200]
    assert fake.invalid_count == 0
