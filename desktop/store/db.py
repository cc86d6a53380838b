"""The service's SQLite database: one connection, used from one dedicated thread.

Only the service process opens the database (ARCHITECTURE: never two writers). Every call
goes through `Store.run`, which hops to the store's thread so the event loop never blocks
on SQLite.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import peewee

from desktop.store.migrations import migrate
from desktop.store.models import Preference, database_proxy

T = TypeVar("T")

_PRAGMAS = {
    "journal_mode": "wal",
    "synchronous": "normal",
    "foreign_keys": 1,
    "busy_timeout": 5000,
}


class Store:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="desk-store")
        self._db = peewee.SqliteDatabase(None)

    def _open(self) -> None:
        self._db.init(str(self.path), pragmas=_PRAGMAS)
        database_proxy.initialize(self._db)
        self._db.connect(reuse_if_open=True)
        if self.path.exists():
            self.path.chmod(0o600)
        migrate(self._db)

    async def open(self) -> None:
        await self.run(self._open)

    async def close(self) -> None:
        await self.run(lambda: self._db.close())
        self._executor.shutdown(wait=True)

    async def run(self, fn: Callable[[], T]) -> T:
        """Run `fn` on the store's thread (SQLite connections are thread-bound)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, fn)

    # Preferences -----------------------------------------------------------------

    async def get_preference(self, key: str) -> object:
        def read() -> object:
            row = Preference.get_or_none(Preference.key == key)
            return None if row is None else json.loads(row.value)

        return await self.run(read)

    async def set_preference(self, key: str, value: object) -> None:
        encoded = json.dumps(value, separators=(",", ":"))
        now = int(time.time() * 1000)

        def write() -> None:
            with self._db.atomic():
                Preference.insert(
                    key=key, value=encoded, updated=now
                ).on_conflict_replace().execute()

        await self.run(write)
