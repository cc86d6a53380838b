"""What the background-job tests share: a real SQLite store (and the durable bus on it)
reopenable from its file, so a test can restart the registry and the store the way a service
does; rows read from it; and calls to a `desk serve` process over HTTP."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import aiohttp

from desktop.events.bus import DurableBus, draft
from desktop.events.fanout import Fanout
from desktop.store.db import Store
from tests.support.service import Service
from tests.support.wait import wait_for

DEADLINE = 30.0


class Stores:
    """Opens stores (and buses) on one database file and closes them all at the end."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._open: list[tuple[Store, DurableBus]] = []

    async def open(self) -> DurableBus:
        store = Store(self.path)
        await store.open()
        bus = DurableBus(store, Fanout(limit=256))
        bus.start()
        self._open.append((store, bus))
        return bus

    async def close(self, bus: DurableBus) -> None:
        for item in list(self._open):
            if item[1] is bus:
                self._open.remove(item)
                await bus.stop()
                await item[0].close()

    async def close_all(self) -> None:
        for _, bus in list(self._open):
            await self.close(bus)

    def owed_on_disk(self) -> dict[str, dict[str, object]]:
        """The committed job rows whose notice is owed, read through a connection of its own
        (what a crash would leave), keyed by notification id."""
        conn = sqlite3.connect(self.path)
        try:
            rows = conn.execute(
                "SELECT notification_id, data, output FROM job WHERE owed = 1"
            ).fetchall()
        finally:
            conn.close()
        return {nid: {**json.loads(data), "output": output} for nid, data, output in rows}


async def create_session(bus: DurableBus, sid: str, parent: str | None = None) -> None:
    """Publishes the session's creation (a child of `parent` when given)."""
    data: dict[str, object] = {"title": sid, "directory": "/"}
    if parent is not None:
        data["parent_id"] = parent
    await bus.publish(draft(sid, "session.created", data))


async def rows(bus: DurableBus, sql: str, *args: object) -> list[tuple[object, ...]]:
    """The rows `sql` selects, read on the store's thread."""
    return await bus.store.run(lambda: bus.store.connection().execute(sql, args).fetchall())


async def inbox(bus: DurableBus, sid: str) -> list[dict[str, object]]:
    """The session's inbox rows' data, oldest first."""
    found = await rows(bus, "SELECT data FROM inbox WHERE session_id = ? ORDER BY created", sid)
    return [json.loads(str(r[0])) for r in found]


async def call(served: Service, method: str, path: str, body: object = None) -> Any:
    """One API call to the served process; its `data`, after checking it succeeded."""
    async with (
        aiohttp.ClientSession(headers=served.headers) as http,
        http.request(method, served.url + path, json=body) as response,
    ):
        payload = await response.json()
        assert response.status < 400, payload
        return payload["data"]


async def eventually(check: Any, what: str) -> Any:
    """`check`'s first truthy answer within DEADLINE; fails saying `what` never came."""
    return await wait_for(check, DEADLINE, f"never: {what}", 0.05)


def texts(messages: list[dict[str, Any]]) -> list[str]:
    """The text parts of the assistant messages, in order."""
    out = []
    for m in messages:
        if m["type"] == "assistant":
            out += [p["text"] for p in m["content"] if p["type"] == "text"]
    return out
