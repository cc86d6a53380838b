"""The terminal routes of an in-process service (aiohttp's TestClient), as the route tests
drive them: creating a plain shell, connecting a WebSocket reader."""

from __future__ import annotations

from typing import Any

import aiohttp
from aiohttp.test_utils import TestClient

from tests.support.app import TOKEN
from tests.support.host import SHELL
from tests.support.websocket import WsReader

AUTH = {"Authorization": f"Bearer {TOKEN}"}


async def create(api: TestClient, **body: Any) -> dict[str, Any]:
    response = await api.post("/api/pty", json={**SHELL, **body}, headers=AUTH)
    assert response.status == 201, await response.text()
    data: dict[str, Any] = (await response.json())["data"]
    return data


async def connect(api: TestClient, terminal_id: str, ack: bool = True, **query: str) -> WsReader:
    socket = await api.ws_connect(f"/api/pty/{terminal_id}/connect", params=query, headers=AUTH)
    reader = WsReader(socket, ack=ack)
    await reader.settle_replay()
    return reader


async def error_of(response: aiohttp.ClientResponse) -> dict[str, Any]:
    body = await response.json()
    assert set(body) == {"error"}
    error: dict[str, Any] = body["error"]
    assert set(error) == {"type", "message"}
    assert error["message"]
    return error
