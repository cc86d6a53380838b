"""`PATCH /api/session/{id}/message/{mid}`: every success and error case, through HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from desktop.server.appkeys import ENGINE, STORE
from desktop.store import log
from tests.support.sessions import ended, publish_app, started, table_counts

MID = "msg_assistant"


async def session_with_assistant(
    client: TestClient, auth: dict[str, str], *, complete: bool = True
) -> str:
    response = await client.post("/api/session", json={"directory": str(Path.cwd())}, headers=auth)
    sid: str = (await response.json())["data"]["id"]
    await publish_app(
        client.app, sid, started(MID), ("session.text", {"message_id": MID, "text": "original"})
    )
    if complete:
        await publish_app(client.app, sid, ended(MID))
    return sid


async def patch(client: TestClient, auth: dict[str, str], sid: str, mid: str, body: Any) -> Any:
    response = await client.patch(
        f"/api/session/{sid}/message/{mid}",
        data=body if isinstance(body, bytes) else json.dumps(body),
        headers=auth,
    )
    return response.status, await response.json()


async def test_patch_replaces_content_through_a_durable_projected_event(
    client: TestClient, auth: dict[str, str]
) -> None:
    sid = await session_with_assistant(client, auth)
    content = [
        {"type": "text", "text": "replacement"},
        {"type": "reasoning", "text": "updated reasoning", "time": {"created": 1}},
        {
            "type": "tool",
            "id": "call_1",
            "name": "read",
            "state": {"status": "completed", "input": {"path": "a"}, "content": "x"},
            "time": {"created": 1, "ran": 2, "completed": 3},
        },
    ]
    status, body = await patch(client, auth, sid, MID, {"content": content})
    assert status == 200
    assert body["data"]["content"] == content
    assert body["seq"] == 5  # created, started, text, ended, updated
    one = await (await client.get(f"/api/session/{sid}/message/{MID}", headers=auth)).json()
    assert one["data"]["content"] == content
    page = await (await client.get(f"/api/session/{sid}/message", headers=auth)).json()
    assert page["data"][0]["id"] == MID
    assert page["data"][0]["content"] == content
    events = (await (await client.get(f"/api/session/{sid}/log", headers=auth)).json())["data"]
    assert events[-1]["type"] == "session.message.content.updated"
    assert events[-1]["aggregate_id"] == sid
    assert events[-1]["data"] == {"message_id": MID, "content": content}
    status, body = await patch(client, auth, sid, MID, {"content": []})
    assert status == 200
    assert body["data"]["content"] == []


async def test_patched_content_replays_into_a_fresh_projection(
    client: TestClient, auth: dict[str, str], tmp_path: Path
) -> None:
    from tests.support.sessions import open_here, replay_here

    sid = await session_with_assistant(client, auth)
    content = [{"type": "reasoning", "text": "replayed reasoning", "time": {"created": 5}}]
    assert (await patch(client, auth, sid, MID, {"content": content}))[0] == 200
    store = client.app[STORE]
    events = await store.run(lambda: log.after(store.connection(), 0, 10**6))
    target = open_here(tmp_path / "target.sqlite3")
    replay_here(target, events)
    from desktop.store import sessions as q

    found = q.message(target.connection(), MID)
    assert found is not None
    assert found[1]["content"] == content


async def test_missing_and_cross_session_messages_are_404(
    client: TestClient, auth: dict[str, str]
) -> None:
    sid = await session_with_assistant(client, auth)
    response = await client.post("/api/session", json={"directory": str(Path.cwd())}, headers=auth)
    other = (await response.json())["data"]["id"]
    before = await table_counts(client.app)
    status, body = await patch(client, auth, other, MID, {"content": []})
    assert (status, body["error"]["type"]) == (404, "session.message_not_found")
    status, body = await patch(client, auth, sid, "msg_nowhere", {"content": []})
    assert (status, body["error"]["type"]) == (404, "session.message_not_found")
    status, body = await patch(client, auth, "ses_missing", MID, {"content": []})
    assert (status, body["error"]["type"]) == (404, "session.not_found")
    assert await table_counts(client.app) == before


async def test_non_assistant_incomplete_and_unfinished_tool_content_are_refused(
    client: TestClient, auth: dict[str, str]
) -> None:
    sid = await session_with_assistant(client, auth, complete=False)
    await publish_app(
        client.app, sid, ("session.synthetic", {"message_id": "msg_syn", "text": "s"})
    )
    prompted = {"message_id": "msg_user", "text": "u", "mode": "queue"}
    await publish_app(client.app, sid, ("session.prompted", prompted))
    before = await table_counts(client.app)
    for mid in ("msg_syn", "msg_user"):
        status, body = await patch(client, auth, sid, mid, {"content": []})
        assert (status, body["error"]["type"]) == (400, "session.message_not_assistant")
    status, body = await patch(client, auth, sid, MID, {"content": []})
    assert (status, body["error"]["type"]) == (409, "session.message_incomplete")
    await publish_app(client.app, sid, ended(MID))
    before = await table_counts(client.app)
    for unfinished in ("streaming", "running"):
        tool = {
            "type": "tool",
            "id": "call_unfinished",
            "name": "read",
            "state": {"status": unfinished, "input": ""},
            "time": {"created": 1},
        }
        status, body = await patch(client, auth, sid, MID, {"content": [tool]})
        assert (status, body["error"]["type"]) == (400, "session.message_tool_incomplete")
    assert await table_counts(client.app) == before
    one = await (await client.get(f"/api/session/{sid}/message/{MID}", headers=auth)).json()
    assert one["data"]["content"] == [{"type": "text", "text": "original"}]


async def test_a_completed_assistant_is_refused_while_its_session_is_busy(
    client: TestClient, auth: dict[str, str]
) -> None:
    sid = await session_with_assistant(client, auth)
    service = client.app[ENGINE].sessions
    await service.set_claim(sid, True)
    status, body = await patch(client, auth, sid, MID, {"content": []})
    assert (status, body["error"]["type"]) == (409, "session.busy")
    await service.set_claim(sid, False)
    status, _ = await patch(client, auth, sid, MID, {"content": []})
    assert status == 200


async def test_a_turn_running_in_this_process_makes_the_session_busy(
    client: TestClient, auth: dict[str, str]
) -> None:
    """From the prompt on: the client's provider never answers, so the turn stays at its
    first step."""
    sid = await session_with_assistant(client, auth)
    prompted = await client.post(f"/api/session/{sid}/prompt", json={"text": "u"}, headers=auth)
    assert prompted.status == 202
    assert sid in client.app[ENGINE].runner.active()
    status, body = await patch(client, auth, sid, MID, {"content": []})
    assert (status, body["error"]["type"]) == (409, "session.busy")
    got = await (await client.get(f"/api/session/{sid}", headers=auth)).json()
    assert got["data"]["status"] == "busy"


async def test_malformed_content_is_400_request_invalid_and_changes_nothing(
    client: TestClient, auth: dict[str, str]
) -> None:
    sid = await session_with_assistant(client, auth)
    before = await table_counts(client.app)
    bad_bodies: list[Any] = [
        b"{not json",
        {},
        {"content": "text"},
        {"content": [{"type": "image", "url": "x"}]},
        {"content": [{"type": "text"}]},
        {"content": [{"type": "text", "text": 5}]},
        {"content": [{"type": "text", "text": "x", "onclick": "y"}]},
        {
            "content": [
                {
                    "type": "tool",
                    "id": "c",
                    "name": "n",
                    "state": {"status": "done", "input": {}},
                    "time": {"created": 1},
                }
            ]
        },
        {"content": [{"type": "reasoning", "text": "x", "time": {"created": -1}}]},
        {"content": [], "extra": True},
        [1, 2],
    ]
    for body in bad_bodies:
        status, answer = await patch(client, auth, sid, MID, body)
        assert status == 400, body
        assert answer["error"]["type"] in ("request.invalid", "request.invalid_json"), body
        assert answer["error"]["message"]
    assert await table_counts(client.app) == before
    one = await (await client.get(f"/api/session/{sid}/message/{MID}", headers=auth)).json()
    assert one["data"]["content"] == [{"type": "text", "text": "original"}]
