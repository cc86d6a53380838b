"""Helpers for the tests that run the agent in an in-process service pointed at the strict fake
(tests/server, tests/checkpoints, tests/security): configuring it, prompting, waiting on the
session's log."""

from __future__ import annotations

from typing import Any

from aiohttp.test_utils import TestClient

from desktop.config import Settings
from desktop.provider.settings import ProviderConfigStore, parse_update
from tests.support.wait import wait_for

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


async def log(
    client: TestClient, auth: dict[str, str], sid: str, after: int = 0
) -> list[dict[str, Any]]:
    """The session's log (its events after seq `after`)."""
    response = await client.get(f"/api/session/{sid}/log?after={after}", headers=auth)
    assert response.status == 200
    return list((await response.json())["data"])


async def until_event(
    client: TestClient, auth: dict[str, str], sid: str, kind: str, count: int = 1, **match: Any
) -> list[dict[str, Any]]:
    """Poll the session's durable log until `count` events of `kind` (matching `match` in
    their data) are there; bounded. Each poll reads only the events new since the last (a
    whole log every 20 ms took the CPU the turn under test needed)."""
    seen: list[dict[str, Any]] = []

    async def found() -> list[dict[str, Any]] | None:
        seen.extend(await log(client, auth, sid, seen[-1]["seq"] if seen else 0))
        matching = [
            e
            for e in seen
            if e["type"] == kind and all(e["data"].get(k) == v for k, v in match.items())
        ]
        return list(seen) if len(matching) >= count else None

    return await wait_for(  # type: ignore[no-any-return]
        found, DEADLINE, lambda: f"no {kind} {match} in {[e['type'] for e in seen]}", 0.02
    )


async def until_idle(client: TestClient, auth: dict[str, str], sid: str) -> dict[str, Any]:
    async def idle() -> dict[str, Any] | None:
        response = await client.get(f"/api/session/{sid}", headers=auth)
        session: dict[str, Any] = (await response.json())["data"]
        return session if session["status"] != "busy" else None

    return await wait_for(idle, DEADLINE, "the turn to end", 0.02)  # type: ignore[no-any-return]


async def messages(client: TestClient, auth: dict[str, str], sid: str) -> list[dict[str, Any]]:
    response = await client.get(f"/api/session/{sid}/message?limit=200", headers=auth)
    return list((await response.json())["data"])


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]
