"""Preferences, bad bodies, and the event stream."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest
from aiohttp.test_utils import TestClient

from desktop.server.appkeys import EVENTS
from tests.support.wait import wait_for


async def test_a_preference_is_null_until_put_then_reads_back(
    client: TestClient, auth: dict[str, str]
) -> None:
    missing = await client.get("/api/ui/prefs/terminal-order", headers=auth)
    assert (await missing.json())["data"] == {"key": "terminal-order", "value": None}
    order = ["pty_b", "pty_a"]
    put = await client.put("/api/ui/prefs/terminal-order", json={"value": order}, headers=auth)
    assert put.status == 200
    got = await client.get("/api/ui/prefs/terminal-order", headers=auth)
    assert (await got.json())["data"]["value"] == order


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        (b"{not json", "request.invalid_json"),
        (b"[1, 2]", "request.invalid"),
        (b'{"other": 1}', "request.invalid"),
        (b"\xff\xfe", "request.invalid_json"),
    ],
)
async def test_bad_bodies_are_400_and_change_nothing(
    client: TestClient, auth: dict[str, str], body: bytes, kind: str
) -> None:
    response = await client.put("/api/ui/prefs/k", data=body, headers=auth)
    assert response.status == 400
    error = (await response.json())["error"]
    assert error["type"] == kind
    assert error["message"]
    got = await client.get("/api/ui/prefs/k", headers=auth)
    assert (await got.json())["data"]["value"] is None


async def test_bad_preference_key_is_400(client: TestClient, auth: dict[str, str]) -> None:
    response = await client.get("/api/ui/prefs/" + "x" * 300, headers=auth)
    assert response.status == 400
    assert (await response.json())["error"]["type"] == "request.invalid"


async def test_oversized_body_is_413_json(client: TestClient, auth: dict[str, str]) -> None:
    response = await client.put(
        "/api/ui/prefs/big", data=b'{"value": "' + b"x" * (5 * 1024 * 1024) + b'"}', headers=auth
    )
    assert response.status == 413
    assert (await response.json())["error"]["type"] == "request.too_large"


async def test_event_stream_delivers_published_events(
    client: TestClient, auth: dict[str, str]
) -> None:
    response = await client.get("/api/event", headers=auth)
    assert response.headers["Content-Type"].startswith("text/event-stream")

    async def next_data() -> dict[str, object]:
        while True:
            line = await response.content.readline()
            if line.startswith(b"data: "):
                value = json.loads(line[6:])
                assert isinstance(value, dict)
                return value

    first = await asyncio.wait_for(next_data(), 5)
    assert first["type"] == "server.connected"
    client.app[EVENTS].publish("pty.created", {"info": {"id": "pty_1"}})
    second = await asyncio.wait_for(next_data(), 5)
    assert second == {"type": "pty.created", "properties": {"info": {"id": "pty_1"}}}
    response.close()


async def test_chunked_oversized_preference_is_413(
    client: TestClient, auth: dict[str, str]
) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"value": "'
        for _ in range(80):
            yield b"x" * 1024
        yield b'"}'

    response = await client.put("/api/ui/prefs/chunked", data=chunks(), headers=auth)
    assert response.status == 413
    got = await client.get("/api/ui/prefs/chunked", headers=auth)
    assert (await got.json())["data"]["value"] is None


async def test_a_client_leaving_the_event_stream_ends_it_without_a_traceback(
    client: TestClient, auth: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    bus = client.app[EVENTS]
    response = await client.get("/api/event", headers=auth)
    await asyncio.wait_for(response.content.readline(), 5)
    assert len(bus._subscribers) == 1
    response.close()  # the tab goes away

    # The handler notices only when it writes: keep publishing until it has ended.
    def ended() -> bool:
        if bus._subscribers:
            bus.publish("pty.updated", {"info": {"id": "pty_1"}})
        return not bus._subscribers

    await wait_for(ended, within=10, interval=0.02, what="the stream to end")
    assert not [record for record in caplog.records if record.exc_info], caplog.text
