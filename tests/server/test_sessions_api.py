"""Session routes through HTTP: create/list/get/rename/delete, pages, log, prompt, bad input."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any, cast

import pytest
from aiohttp.test_utils import TestClient

from tests.support.sessions import ended, publish_app, started, table_counts


async def new_session(client: TestClient, auth: dict[str, str], **body: Any) -> dict[str, Any]:
    body.setdefault("directory", str(Path.cwd()))
    response = await client.post("/api/session", json=body, headers=auth)
    assert response.status == 201, await response.text()
    return (await response.json())["data"]  # type: ignore[no-any-return]


async def test_a_created_session_is_listed_fetched_renamed_and_shaped_as_the_api_says(
    client: TestClient, auth: dict[str, str], tmp_path: Path
) -> None:
    session = await new_session(client, auth, title="Work", directory=str(tmp_path))
    assert set(session) == {
        "id",
        "title",
        "parent_id",
        "directory",
        "status",
        "time",
        "permission_mode",
        "model",
        "context",
    }
    assert session["model"] == {"id": ""}  # the provider's model until one is chosen
    assert session["context"] == {"used": 0}  # no request yet, no window known
    assert session["title"] == "Work"
    assert session["status"] == "idle"
    real = await asyncio.to_thread(os.path.realpath, tmp_path)
    assert session["directory"] == real
    assert session["parent_id"] is None
    listed = (await (await client.get("/api/session", headers=auth)).json())["data"]
    assert [s["id"] for s in listed] == [session["id"]]
    got = await client.get(f"/api/session/{session['id']}", headers=auth)
    assert (await got.json())["data"] == session
    renamed = await client.patch(
        f"/api/session/{session['id']}", json={"title": "New"}, headers=auth
    )
    assert (await renamed.json())["data"]["title"] == "New"


async def test_a_directory_that_is_not_a_folder_is_400_and_creates_nothing(
    client: TestClient, auth: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "file").write_text("x")
    for directory in (str(tmp_path / "missing"), str(tmp_path / "file"), ""):
        response = await client.post("/api/session", json={"directory": directory}, headers=auth)
        assert response.status == 400
        assert (await response.json())["error"]["type"] == "request.invalid"
    assert (await table_counts(client.app))["session"] == 0


async def test_delete_removes_messages_events_inbox_and_children(
    client: TestClient, auth: dict[str, str]
) -> None:
    parent = await new_session(client, auth)
    child = await new_session(client, auth, parent_id=parent["id"])
    other = await new_session(client, auth)
    await client.post(f"/api/session/{parent['id']}/prompt", json={"text": "hi"}, headers=auth)
    await publish_app(client.app, child["id"], started("msg_child"))
    response = await client.delete(f"/api/session/{parent['id']}", headers=auth)
    assert response.status == 204
    for gone in (parent, child):
        missing = await client.get(f"/api/session/{gone['id']}", headers=auth)
        assert missing.status == 404
        assert (await missing.json())["error"]["type"] == "session.not_found"
    counts = await table_counts(client.app)
    assert counts["session"] == 1
    assert counts["message"] == 0
    assert counts["inbox"] == 0
    # The other session's creation plus one tombstone of the deleted one.
    assert counts["event"] == 2
    again = await client.delete(f"/api/session/{parent['id']}", headers=auth)
    assert again.status == 404
    assert (await client.get(f"/api/session/{other['id']}", headers=auth)).status == 200


async def test_prompt_records_a_user_message_and_an_inbox_row(
    client: TestClient, auth: dict[str, str]
) -> None:
    session = await new_session(client, auth)
    response = await client.post(
        f"/api/session/{session['id']}/prompt",
        json={"text": "do it", "mode": "steer"},
        headers=auth,
    )
    assert response.status == 202
    message_id = (await response.json())["data"]["message_id"]
    got = await client.get(f"/api/session/{session['id']}/message/{message_id}", headers=auth)
    body = await got.json()
    assert body["data"]["type"] == "user"
    assert body["data"]["text"] == "do it"
    assert body["seq"] == 2
    from desktop.server.appkeys import STORE
    from desktop.store import sessions as q

    store = client.app[STORE]
    pending = await store.run(lambda: q.inbox_pending(store.connection(), session["id"]))
    assert [(p["id"], p["mode"], p["kind"]) for p in pending] == [(message_id, "steer", "user")]


async def test_message_pages_walk_back_with_stable_cursors(
    client: TestClient, auth: dict[str, str]
) -> None:
    session = await new_session(client, auth)
    sid = session["id"]
    for i in range(7):
        await publish_app(
            client.app,
            sid,
            ("session.prompted", {"message_id": f"m{i}", "text": str(i), "mode": "queue"}),
        )
    url = f"/api/session/{sid}/message"
    latest = await (await client.get(url + "?limit=3", headers=auth)).json()
    assert [m["id"] for m in latest["data"]] == ["m4", "m5", "m6"]
    assert latest["cursor"]["next"] is None
    assert latest["seq"] == 8
    # New messages arriving meanwhile do not shift the older pages.
    await publish_app(
        client.app, sid, ("session.prompted", {"message_id": "m7", "text": "7", "mode": "queue"})
    )
    older = await (
        await client.get(url + f"?limit=3&before={latest['cursor']['previous']}", headers=auth)
    ).json()
    assert [m["id"] for m in older["data"]] == ["m1", "m2", "m3"]
    oldest = await (
        await client.get(url + f"?limit=3&before={older['cursor']['previous']}", headers=auth)
    ).json()
    assert [m["id"] for m in oldest["data"]] == ["m0"]
    assert oldest["cursor"]["previous"] is None
    newer = await (
        await client.get(url + f"?limit=3&after={older['cursor']['next']}", headers=auth)
    ).json()
    assert [m["id"] for m in newer["data"]] == ["m4", "m5", "m6"]
    assert newer["cursor"]["next"] is not None
    tail = await (await client.get(url + f"?after={newer['cursor']['next']}", headers=auth)).json()
    assert [m["id"] for m in tail["data"]] == ["m7"]
    assert tail["cursor"]["next"] is None


async def test_the_log_lists_a_sessions_events_in_seq_order_after_a_seq(
    client: TestClient, auth: dict[str, str]
) -> None:
    session = await new_session(client, auth)
    sid = session["id"]
    await publish_app(
        client.app,
        sid,
        started("msg_a"),
        ("session.text", {"message_id": "msg_a", "text": "x"}),
        ended("msg_a"),
    )
    full = (await (await client.get(f"/api/session/{sid}/log", headers=auth)).json())["data"]
    assert [e["seq"] for e in full] == [1, 2, 3, 4]
    assert full[0]["type"] == "session.created"
    assert full[-1]["type"] == "session.step.ended"
    assert set(full[0]) == {
        "id",
        "position",
        "type",
        "aggregate_id",
        "session_id",
        "seq",
        "version",
        "created",
        "data",
    }
    tail = (await (await client.get(f"/api/session/{sid}/log?after=2", headers=auth)).json())[
        "data"
    ]
    assert [e["seq"] for e in tail] == [3, 4]


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "kind"),
    [
        ("POST", "/api/session", b"{nope", 400, "request.invalid_json"),
        ("POST", "/api/session", b"[]", 400, "request.invalid"),
        ("POST", "/api/session", b'{"title": 5}', 400, "request.invalid"),
        ("POST", "/api/session", b'{"title": "x", "extra": 1}', 400, "request.invalid"),
        ("POST", "/api/session", b'{"parent_id": "ses_unknown"}', 404, "session.not_found"),
        ("POST", "/api/session", b'{"parent_id": "bad id!"}', 400, "request.invalid"),
        ("POST", "/api/session", b'{"title": "' + b"t" * 600 + b'"}', 400, "request.invalid"),
        ("GET", "/api/session/ses_unknown", None, 404, "session.not_found"),
        ("DELETE", "/api/session/ses_unknown", None, 404, "session.not_found"),
        ("PATCH", "/api/session/{sid}", b'{"title": ""}', 400, "request.invalid"),
        ("PATCH", "/api/session/{sid}", b'{"title": ["x"]}', 400, "request.invalid"),
        ("GET", "/api/session/{sid}/message?limit=0", None, 400, "request.invalid"),
        ("GET", "/api/session/{sid}/message?limit=abc", None, 400, "request.invalid"),
        ("GET", "/api/session/{sid}/message?before=-1", None, 400, "request.invalid"),
        ("GET", "/api/session/{sid}/message?before=1&after=1", None, 400, "request.invalid"),
        ("GET", "/api/session/ses_unknown/message", None, 404, "session.not_found"),
        ("GET", "/api/session/{sid}/message/msg_unknown", None, 404, "session.message_not_found"),
        ("GET", "/api/session/{sid}/log?after=x", None, 400, "request.invalid"),
        ("POST", "/api/session/{sid}/prompt", b"{bad", 400, "request.invalid_json"),
        ("POST", "/api/session/{sid}/prompt", b'{"text": 1}', 400, "request.invalid"),
        ("POST", "/api/session/{sid}/prompt", b'{"text": "  "}', 400, "request.invalid"),
        (
            "POST",
            "/api/session/{sid}/prompt",
            b'{"text": "x", "mode": "now"}',
            400,
            "request.invalid",
        ),
        ("POST", "/api/session/ses_unknown/prompt", b'{"text": "x"}', 404, "session.not_found"),
        (
            "POST",
            "/api/session/{sid}/prompt",
            b'{"text": "' + b"x" * 1_000_001 + b'"}',
            400,
            "request.invalid",
        ),
        (
            "POST",
            "/api/session/{sid}/prompt",
            b'{"text": "' + b"x" * (5 * 1024 * 1024) + b'"}',
            413,
            "request.too_large",
        ),
    ],
)
async def test_bad_input_is_a_clear_4xx_and_writes_nothing(
    client: TestClient,
    auth: dict[str, str],
    method: str,
    path: str,
    body: bytes | None,
    status: int,
    kind: str,
) -> None:
    session = await new_session(client, auth)
    before = await table_counts(client.app)
    response = await client.request(
        method, path.replace("{sid}", session["id"]), data=body, headers=auth
    )
    assert response.status == status, await response.text()
    error = (await response.json())["error"]
    assert error["type"] == kind
    assert error["message"]
    assert await table_counts(client.app) == before


async def test_the_runner_is_woken_after_the_prompt_is_durable(
    client: TestClient, auth: dict[str, str]
) -> None:
    from desktop.agent.service import Runner, SessionService
    from desktop.server.appkeys import ENGINE, STORE
    from desktop.store import sessions as q

    store = client.app[STORE]
    woken: list[tuple[str, asyncio.Future[list[dict[str, object]]]]] = []

    class Recorder:
        def wake(self, session_id: str) -> None:
            # What a runner would do first: read the inbox (queued now, behind the commit).
            read = store.run(lambda: q.inbox_pending(store.connection(), session_id))
            woken.append((session_id, asyncio.ensure_future(read)))

    service = SessionService(client.app[ENGINE].bus, cast(Runner, Recorder()))
    session = await new_session(client, auth)
    message_id = await service.prompt(session["id"], "go")
    [(sid, pending)] = woken
    assert sid == session["id"]
    assert [p["id"] for p in await pending] == [message_id]
