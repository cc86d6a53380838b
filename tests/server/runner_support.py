"""Helpers for the runner tests: an agent-enabled service pointed at the strict fake."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp.test_utils import TestClient

from desktop.config import Settings
from desktop.provider.settings import ProviderConfigStore, parse_update

DEADLINE = 30.0


def configure(settings: Settings, base_url: str, model: str = "fake-model") -> None:
    ProviderConfigStore(settings).save(
        parse_update({"provider": "openai-compatible", "base_url": base_url, "model": model})
    )


async def new_session(client: TestClient, auth: dict[str, str], directory: str) -> str:
    response = await client.post("/api/session", json={"directory": directory}, headers=auth)
    assert response.status == 201, await response.text()
    return str((await response.json())["data"]["id"])


async def prompt(
    client: TestClient, auth: dict[str, str], sid: str, text: str, mode: str = "queue"
) -> str:
    response = await client.post(
        f"/api/session/{sid}/prompt", json={"text": text, "mode": mode}, headers=auth
    )
    assert response.status == 202, await response.text()
    return str((await response.json())["data"]["message_id"])


async def log(client: TestClient, auth: dict[str, str], sid: str) -> list[dict[str, Any]]:
    response = await client.get(f"/api/session/{sid}/log", headers=auth)
    assert response.status == 200
    return list((await response.json())["data"])


async def until_event(
    client: TestClient, auth: dict[str, str], sid: str, kind: str, count: int = 1, **match: Any
) -> list[dict[str, Any]]:
    """Poll the session's durable log until `count` events of `kind` (matching `match` in
    their data) are there; bounded."""
    deadline = asyncio.get_running_loop().time() + DEADLINE
    while True:
        events = await log(client, auth, sid)
        found = [
            e
            for e in events
            if e["type"] == kind and all(e["data"].get(k) == v for k, v in match.items())
        ]
        if len(found) >= count:
            return events
        assert asyncio.get_running_loop().time() < deadline, (
            f"no {kind} {match} in {[e['type'] for e in events]}"
        )
        await asyncio.sleep(0.02)


async def until_idle(client: TestClient, auth: dict[str, str], sid: str) -> dict[str, Any]:
    deadline = asyncio.get_running_loop().time() + DEADLINE
    while True:
        session = (await (await client.get(f"/api/session/{sid}", headers=auth)).json())["data"]
        if session["status"] != "busy":
            return dict(session)
        assert asyncio.get_running_loop().time() < deadline, "the turn never ended"
        await asyncio.sleep(0.02)


async def messages(client: TestClient, auth: dict[str, str], sid: str) -> list[dict[str, Any]]:
    response = await client.get(f"/api/session/{sid}/message?limit=200", headers=auth)
    return list((await response.json())["data"])


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]
