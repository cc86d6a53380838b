"""Terminal routes of the real service (aiohttp app on a socket) with a real PTY host."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestClient

from desktop.server.auth import COOKIE_NAME
from desktop.server.terminals import TICKETS
from tests.support.app import TOKEN
from tests.support.host import SHELL
from tests.support.terminals import AUTH, connect, create, error_of
from tests.support.websocket import WsReader

INFO_FIELDS = {
    "id", "title", "command", "args", "cwd", "group", "status", "exit_code", "pid",
    "foreground_process", "busy", "size", "output", "epoch", "created", "revived",
}  # fmt: skip


async def test_a_terminal_is_created_listed_patched_snapshotted_and_deleted_over_rest(
    api: TestClient, tmp_path: Path
) -> None:
    info = await create(
        api, cwd=str(tmp_path), title="build", group="g1", size={"cols": 90, "rows": 20}
    )
    assert set(info) == INFO_FIELDS
    assert info["status"] == "running"
    assert info["exit_code"] is None
    assert info["size"] == {"cols": 90, "rows": 20}
    assert info["cwd"] == str(tmp_path)
    assert set(info["output"]) == {"head", "tail"}
    terminal_id = info["id"]
    listed = await (await api.get("/api/pty", headers=AUTH)).json()
    assert [t["id"] for t in listed["data"]] == [terminal_id]
    assert (await (await api.get("/api/pty?group=nope", headers=AUTH)).json())["data"] == []
    got = await (await api.get(f"/api/pty/{terminal_id}", headers=AUTH)).json()
    assert got["data"]["id"] == terminal_id
    patched = await api.patch(
        f"/api/pty/{terminal_id}",
        json={"title": "renamed", "size": {"cols": 70, "rows": 10}},
        headers=AUTH,
    )
    assert patched.status == 200
    assert (await patched.json())["data"]["title"] == "renamed"
    reader = await connect(api, terminal_id)
    await reader.type_line("echo snap-$((1+1))")
    await reader.until_output(b"snap-2\r\n")
    snapshot = await api.get(f"/api/pty/{terminal_id}/snapshot", headers=AUTH)
    body = (await snapshot.json())["data"]
    assert set(body) == {"info", "lines", "cursor", "checkpoint"}
    assert any(line == "snap-2" for line in body["lines"])
    assert set(body["cursor"]) == {"x", "y"}
    assert b"snap-2" in base64.b64decode(body["checkpoint"])
    deleted = await api.delete(f"/api/pty/{terminal_id}", headers=AUTH)
    assert deleted.status == 204
    missing = await api.get(f"/api/pty/{terminal_id}", headers=AUTH)
    assert missing.status == 404
    assert (await error_of(missing))["type"] == "pty.not_found"
    await reader.until(lambda r: r.closed, what="socket closed on delete")


@pytest.mark.parametrize(
    "body",
    [
        {"cwd": "/no/such/dir"},
        {"cwd": "/etc/hostname"},
        {"command": "desk-no-such-program"},
        {"size": {"cols": 0, "rows": 10}},
        {"size": {"cols": 10, "rows": 1001}},
        {"size": {"cols": 1.5, "rows": 10}},
        {"args": "x"},
        {"env": {"A": 3}},
        {"title": []},
        {"group": 1},
    ],
)
async def test_bad_create_is_400_and_creates_nothing(api: TestClient, body: dict[str, Any]) -> None:
    response = await api.post("/api/pty", json={**SHELL, **body}, headers=AUTH)
    assert response.status == 400
    await error_of(response)
    assert (await (await api.get("/api/pty", headers=AUTH)).json())["data"] == []


async def test_bad_json_and_unknown_ids(api: TestClient) -> None:
    response = await api.post("/api/pty", data=b"{nope", headers=AUTH)
    assert response.status == 400
    for method, path in (
        ("GET", "/api/pty/pty_nope"),
        ("PATCH", "/api/pty/pty_nope"),
        ("DELETE", "/api/pty/pty_nope"),
        ("GET", "/api/pty/pty_nope/snapshot"),
    ):
        response = await api.request(method, path, json={}, headers=AUTH)
        assert response.status == 404, (method, path)
        assert (await error_of(response))["type"] == "pty.not_found"
    assert (await api.get("/api/pty")).status == 401


async def test_connect_validation_happens_before_the_upgrade(api: TestClient) -> None:
    info = await create(api)
    cases = [
        (info["id"], {"cursor": "-1"}, 400),
        (info["id"], {"cursor": "abc"}, 400),
        (info["id"], {"cursor": "1.5"}, 400),
        (info["id"], {"role": "boss"}, 400),
        (info["id"], {"takeover": "yes"}, 400),
        (info["id"], {"attachment_id": "has space"}, 400),
        ("pty_unknown", {"cursor": "0"}, 404),
    ]
    for terminal_id, query, status in cases:
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await api.ws_connect(f"/api/pty/{terminal_id}/connect", params=query, headers=AUTH)
        assert refused.value.status == status, (query, refused.value.status)
    plain = await api.get(f"/api/pty/{info['id']}/connect", headers=AUTH)
    assert plain.status == 400


async def test_connect_tickets_need_the_own_origin_and_are_single_use_bound_and_expiring(
    api: TestClient,
) -> None:
    info = await create(api)
    other = await create(api)
    url = f"/api/pty/{info['id']}/connect-token"
    no_header = await api.post(url, headers=AUTH)
    assert no_header.status == 403
    foreign = await api.post(
        url, headers={**AUTH, "X-Desk-Ticket": "1", "Origin": "http://evil.example"}
    )
    assert foreign.status == 403
    unknown = await api.post(
        "/api/pty/pty_nope/connect-token", headers={**AUTH, "X-Desk-Ticket": "1"}
    )
    assert unknown.status == 404
    own_origin = str(api.make_url("/")).rstrip("/")
    issued = await api.post(url, headers={**AUTH, "X-Desk-Ticket": "1", "Origin": own_origin})
    assert issued.status == 200
    data = (await issued.json())["data"]
    assert data["expires_in"] == 60
    assert isinstance(data["ticket"], str)

    path = f"/api/pty/{info['id']}/connect"
    socket = await api.ws_connect(path, params={"ticket": data["ticket"]})
    reader = WsReader(socket)
    await reader.settle_replay()
    assert reader.attached["type"] == "attached"
    await socket.close()
    # Single use.
    with pytest.raises(aiohttp.WSServerHandshakeError) as reused:
        await api.ws_connect(path, params={"ticket": data["ticket"]})
    assert reused.value.status == 403

    async def ticket_for(terminal_id: str) -> str:
        response = await api.post(
            f"/api/pty/{terminal_id}/connect-token", headers={**AUTH, "X-Desk-Ticket": "1"}
        )
        return str((await response.json())["data"]["ticket"])

    # Bound to its terminal.
    with pytest.raises(aiohttp.WSServerHandshakeError) as wrong_terminal:
        await api.ws_connect(path, params={"ticket": await ticket_for(other["id"])})
    assert wrong_terminal.value.status == 403
    # Expired.
    store = api.app[TICKETS]
    now = [1000.0]
    store.clock = lambda: now[0]
    stale = await ticket_for(info["id"])
    now[0] += 61
    with pytest.raises(aiohttp.WSServerHandshakeError) as expired:
        await api.ws_connect(path, params={"ticket": stale})
    assert expired.value.status == 403
    # Garbage ticket, and no ticket with only a signed-in browser's cookie.
    with pytest.raises(aiohttp.WSServerHandshakeError) as garbage:
        await api.ws_connect(path, params={"ticket": "x" * 500})
    assert garbage.value.status == 403
    signed_in = await api.get(f"/?token={TOKEN}", allow_redirects=False)
    assert signed_in.status == 303
    cookie = signed_in.cookies[COOKIE_NAME].value
    api.session.cookie_jar.clear()
    with pytest.raises(aiohttp.WSServerHandshakeError) as cookie_only:
        await api.ws_connect(path, headers={"Cookie": f"{COOKIE_NAME}={cookie}"})
    assert cookie_only.value.status == 403  # signed in (else 401), but a ticket is required


async def test_websocket_attaches_echoes_resizes_and_refuses_garbage_and_observer_input(
    api: TestClient,
) -> None:
    info = await create(api)
    reader = await connect(api, info["id"], attachment_id="tab-1")
    attached = reader.attached
    assert set(attached) == {"type", "attachment_id", "role", "generation", "info", "replay"}
    assert attached["attachment_id"] == "tab-1"
    assert attached["role"] == "controller"
    assert set(attached["replay"]) == {"requested", "available", "end", "truncated"}
    assert reader.kinds[0] == "attached"
    assert "replay_complete" in reader.kinds
    await reader.type_line("echo ws-$((3*3))")
    await reader.until_output(b"ws-9\r\n")
    # Garbage text frames are answered with an error and change nothing.
    for garbage in ("not json", "[1,2]", '{"type": "explode"}', '{"type": "ack", "bytes": -4}',
                    '{"type": "resize", "cols": 0, "rows": 5}'):  # fmt: skip
        errors = len(reader.of_type("error"))
        await reader.socket.send_str(garbage)
        await reader.until(lambda r: len(r.of_type("error")) > errors, what=garbage)  # noqa: B023
    assert (await (await api.get(f"/api/pty/{info['id']}", headers=AUTH)).json())["data"][
        "size"
    ] == {"cols": 80, "rows": 24}
    await reader.socket.send_str(json.dumps({"type": "resize", "cols": 100, "rows": 33}))
    resized = await reader.until_type("resized")
    assert (resized["cols"], resized["rows"]) == (100, 33)
    observer = await connect(api, info["id"], role="observer")
    assert observer.attached["role"] == "observer"
    await observer.socket.send_bytes(b"echo nope\r")
    await observer.until_type("error")
    conflict = await api.patch(
        f"/api/pty/{info['id']}",
        json={
            "size": {"cols": 50, "rows": 10},
            "attachment_id": observer.attached["attachment_id"],
        },
        headers=AUTH,
    )
    assert conflict.status == 409
    await reader.type_line("echo still-fine")
    await reader.until_output(b"still-fine\r\n")
    assert b"nope" not in reader.output


async def test_utf8_split_across_reads_stays_binary_and_intact(api: TestClient) -> None:
    script = "read go; printf '\\342'; sleep 0.3; printf '\\202\\254\\n'; exec cat"
    info = await create(api, command="sh", args=["-c", script])
    reader = await connect(api, info["id"])
    await reader.type_line("")
    await reader.until_output("\u20ac\r\n".encode())
    text_types = {kind for kind in reader.kinds if kind != "binary"}
    assert text_types <= {"attached", "replay_complete", "foreground_process_changed"}


async def test_cursor_reconnect_replays_exactly(api: TestClient) -> None:
    info = await create(api, command="sh", args=["-c", "read go; seq 1 3000; echo END; exec cat"])
    first = await connect(api, info["id"], cursor="0")
    await first.type_line("")
    await first.until(lambda r: len(r.output) > 2000)
    cursor = first.cursor
    kept = bytes(first.output[: len(first.output)])
    await first.socket.close()
    second = await connect(api, info["id"], cursor=str(cursor))
    # The first socket may already have read up to END: then the replay is empty.
    await second.until_type("replay_complete")
    await second.until(lambda r: b"END\r\n" in kept + bytes(r.output))
    whole = await connect(api, info["id"], cursor="0", role="observer")
    await whole.until_output(b"END\r\n")
    assert kept + bytes(second.output) == bytes(whole.output)


async def test_terminal_events_reach_the_event_bus(api: TestClient) -> None:
    from desktop.server.appkeys import EVENTS

    subscription = api.app[EVENTS].subscribe()
    info = await create(
        api, command="sh", args=["-c", "read x; printf '\\033]2;named\\007'; exit 4"]
    )
    reader = await connect(api, info["id"])
    await reader.type_line("")
    await reader.until_type("exited")
    await api.delete(f"/api/pty/{info['id']}", headers=AUTH)
    seen: list[dict[str, Any]] = []

    async def collect() -> None:
        while not any(e["type"] == "pty.deleted" for e in seen):
            _, frame = await subscription.queue.get()  # (position, frame)
            line = frame.decode().split("data: ", 1)[1]
            seen.append(json.loads(line))

    await asyncio.wait_for(collect(), 15)
    types = [event["type"] for event in seen]
    assert types[0] == "pty.created"
    assert seen[0]["properties"]["info"]["id"] == info["id"]
    assert {"type": "pty.exited", "properties": {"id": info["id"], "exit_code": 4}} in seen
    assert any(
        e["type"] == "pty.updated" and e["properties"]["info"]["title"] == "named" for e in seen
    )
    assert seen[-1] == {"type": "pty.deleted", "properties": {"id": info["id"]}}
