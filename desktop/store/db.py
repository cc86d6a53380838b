"""The service's SQLite database: one connection, used from one dedicated thread."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import peewee

from desktop.store.migrations import MIGRATIONS, SchemaTooNew, migrate, too_new_message
from desktop.store.models import Preference, database_proxy

T = TypeVar("T")

_PRAGMAS = {
    "journal_mode": "wal",
    "synchronous": "normal",
    "foreign_keys": 1,
    "busy_timeout": 5000,
    # Checkpoint (and fsync) every 16 MiB of WAL rather than 4: a streaming answer rewrites
    # the same pages many times, and fewer checkpoints write each of them back once.
    "wal_autocheckpoint": 4096,
    "journal_size_limit": 64 * 1024 * 1024,
}


class Store:
    """Only the service process opens the database (ARCHITECTURE: never two writers). Every call
    goes through `Store.run`, which hops to the store's thread so the event loop never blocks
    on SQLite.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="desk-store")
        self._db = peewee.SqliteDatabase(None)

    @property
    def db(self) -> peewee.SqliteDatabase:
        """The connection, for code running on the store thread (inside `run`)."""
        return self._db

    def connection(self) -> sqlite3.Connection:
        """The raw sqlite3 connection, for hot paths on the store thread."""
        conn = self._db.connection()
        assert isinstance(conn, sqlite3.Connection)
        return conn

    def _refuse_newer(self) -> None:
        # Checked read-only before anything is set: even switching on WAL would write to a
        # database a newer Desk owns.
        if not self.path.exists():
            return
        conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        finally:
            conn.close()
        if version > len(MIGRATIONS):
            raise SchemaTooNew(too_new_message(version))

    def _open(self) -> None:
        self._refuse_newer()
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

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        """Queue `fn` on the store's thread without awaiting it (the bus's writer)."""
        return self._executor.submit(fn)

    async def run(self, fn: Callable[[], T]) -> T:
        """Run `fn` on the store's thread (SQLite connections are thread-bound)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, fn)

    async def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """`fn(connection)` on the store's thread."""
        return await self.run(lambda: fn(self.connection()))

    async def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """`fn(connection)` on the store's thread, in one transaction of its own."""

        def run() -> T:
            with self._db.atomic():
                return fn(self.connection())

        return await self.run(run)

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
