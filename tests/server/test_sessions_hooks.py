"""The test-only publish routes: absent unless DESK_TEST_HOOKS=1, validated like any boundary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from desktop.config import Settings
from desktop.server.app import create_app
from tests.support.app import TOKEN, ClientFactory
from tests.support.sessions import table_counts
from tests.support.sse import next_event


@pytest.fixture
async def hooked(
    aiohttp_client: ClientFactory,
    settings: Settings,
    web_dist: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> TestClient:
    monkeypatch.setenv("DESK_TEST_HOOKS", "1")
    return await aiohttp_client(create_app(settings, token=TOKEN))


async def new_session(client: TestClient, auth: dict[str, str]) -> str:
    response = await client.post("/api/session", json={"directory": str(Path.cwd())}, headers=auth)
    return (await response.json())["data"]["id"]  # type: ignore[no-any-return]


async def test_without_the_environment_variable_the_routes_do_not_exist(
    client: TestClient, auth: dict[str, str]
) -> None:
    response = await client.post("/api/test/events", json={}, headers=auth)
    assert response.status == 404
    assert (await response.json())["error"]["type"] == "route.not_found"


async def test_published_events_are_stored_projected_and_streamed(
    hooked: TestClient, auth: dict[str, str]
) -> None:
    sid = await new_session(hooked, auth)
    stream = await hooked.get("/api/event", headers=auth)
    await next_event(stream)
    hostile = '<img src=x onerror="alert(1)"><script>alert(2)</script>[x](javascript:alert(3))'
    body = {
        "events": [
            {
                "session_id": sid,
                "type": "session.step.started",
                "data": {
                    "message_id": "msg_h",
                    "agent": "b",
                    "model": {"id": "m", "provider_id": "p"},
                },
            },
            {
                "session_id": sid,
                "type": "session.text.delta",
                "data": {"message_id": "msg_h", "delta": "<"},
            },
            {
                "session_id": sid,
                "type": "session.text",
                "data": {"message_id": "msg_h", "text": hostile},
            },
        ]
    }
    response = await hooked.post("/api/test/events", json=body, headers=auth)
    assert response.status == 201
    stored = (await response.json())["data"]
    assert [e["type"] for e in stored] == ["session.step.started", "session.text"]
    message = await (await hooked.get(f"/api/session/{sid}/message/msg_h", headers=auth)).json()
    assert message["data"]["content"] == [{"type": "text", "text": hostile}]
    types: list[str] = []
    while len(types) < 3:
        event = await next_event(stream)
        if event.type != "session.status":
            types.append(event.type)
    assert types == ["session.step.started", "session.text", "session.text.delta"]
    stream.close()


@pytest.mark.parametrize(
    "event",
    [
        {"session_id": "{sid}", "type": "session.unknown", "data": {}},
        {"session_id": "{sid}", "type": "session.text", "data": {"message_id": "msg_h"}},
        {"session_id": "{sid}", "type": "session.text", "data": {"message_id": 5, "text": "x"}},
        {
            "session_id": "{sid}",
            "type": "session.text",
            "data": {"message_id": "m", "text": "x", "more": 1},
        },
        {
            "session_id": "{sid}",
            "type": "session.created",
            "data": {"title": "t", "directory": "/"},
        },
        {"session_id": "bad id", "type": "session.text", "data": {"message_id": "m", "text": "x"}},
        {"session_id": "{sid}", "type": "session.text.delta", "data": {"delta": "x"}},
        {
            "session_id": "{sid}",
            "type": "session.text",
            "data": {"message_id": "msg_none", "text": "x"},
        },
        {
            "session_id": "ses_unknown",
            "type": "session.text",
            "data": {"message_id": "m", "text": "x"},
        },
        "not an object",
    ],
)
async def test_one_bad_event_refuses_the_whole_request(
    hooked: TestClient, auth: dict[str, str], event: Any
) -> None:
    sid = await new_session(hooked, auth)
    good = {
        "session_id": sid,
        "type": "session.step.started",
        "data": {"message_id": "msg_h", "agent": "b", "model": {"id": "m", "provider_id": "p"}},
    }
    if isinstance(event, dict):
        event = {**event, "session_id": event["session_id"].replace("{sid}", sid)}
    before = await table_counts(hooked.app)
    response = await hooked.post("/api/test/events", json={"events": [good, event]}, headers=auth)
    assert 400 <= response.status < 500
    assert (await response.json())["error"]["message"]
    assert await table_counts(hooked.app) == before


async def test_the_claim_hook_makes_a_session_busy_and_idle_again(
    hooked: TestClient, auth: dict[str, str]
) -> None:
    sid = await new_session(hooked, auth)
    busy = await hooked.post(f"/api/test/session/{sid}/claim", json={"claimed": True}, headers=auth)
    assert (await busy.json())["data"]["status"] == "busy"
    idle = await hooked.post(
        f"/api/test/session/{sid}/claim", json={"claimed": False}, headers=auth
    )
    assert (await idle.json())["data"]["status"] == "idle"
    bad = await hooked.post(f"/api/test/session/{sid}/claim", json={"claimed": "yes"}, headers=auth)
    assert bad.status == 400
    missing = await hooked.post(
        "/api/test/session/ses_x/claim", json={"claimed": True}, headers=auth
    )
    assert missing.status == 404
