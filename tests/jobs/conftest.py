"""A real SQLite store (and the durable bus on it) for background-work tests, reopenable
from its file so a test can restart the registry and the store the way a service does."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from desktop.events.bus import DurableBus, draft
from desktop.events.fanout import Fanout
from desktop.store.db import Store


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


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[Stores]:
    s = Stores(tmp_path / "desk.sqlite3")
    yield s
    await s.close_all()


async def create_session(bus: DurableBus, sid: str, parent: str | None = None) -> None:
    data: dict[str, object] = {"title": sid, "directory": "/"}
    if parent is not None:
        data["parent_id"] = parent
    await bus.publish(draft(sid, "session.created", data))


async def rows(bus: DurableBus, sql: str, *args: object) -> list[tuple[object, ...]]:
    return await bus.store.run(lambda: bus.store.connection().execute(sql, args).fetchall())


# Adoption tests run commands in a real PTY host: the same fixtures as its own tests.
from tests.ptyhost.conftest import host, start_host  # noqa: E402, F401
