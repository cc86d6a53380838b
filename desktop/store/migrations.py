"""Schema migrations, applied in order and tracked with SQLite's `user_version`.

Each step runs inside `migrator.migration_context()` (one transaction) together with its
version bump, so a crash mid-migration leaves the previous schema intact. Foreign keys are
switched off around the steps (SQLite ignores that pragma inside a transaction) so a table
rebuild by the migrator cannot cascade deletes; `foreign_key_check` then proves the
result consistent before they are switched back on. A database newer than this code is
refused before anything is written.
"""

from __future__ import annotations

from collections.abc import Callable

import peewee
from playhouse.migrate import SqliteMigrator

from desktop.store.models import EventRow, InboxRow, KvRow, MessageRow, Preference, SessionRow

Migration = Callable[[peewee.SqliteDatabase, SqliteMigrator], None]


class SchemaTooNew(RuntimeError):
    """The database was written by a newer Desk; it is left untouched."""


def _initial(db: peewee.SqliteDatabase, migrator: SqliteMigrator) -> None:
    db.create_tables([Preference])


def _sessions(db: peewee.SqliteDatabase, migrator: SqliteMigrator) -> None:
    db.create_tables([SessionRow, EventRow, MessageRow, InboxRow, KvRow])


MIGRATIONS: list[Migration] = [_initial, _sessions]


def schema_version(db: peewee.SqliteDatabase) -> int:
    row = db.execute_sql("PRAGMA user_version").fetchone()
    return int(row[0]) if row else 0


def too_new_message(version: int) -> str:
    return (
        f"The database schema (version {version}) is newer than this Desk "
        f"(knows {len(MIGRATIONS)}); refusing to touch it. Upgrade Desk or use "
        "another data directory."
    )


def migrate(db: peewee.SqliteDatabase) -> int:
    """Bring the schema up to date; returns the resulting version."""
    migrator = SqliteMigrator(db)
    current = schema_version(db)
    if current > len(MIGRATIONS):
        raise SchemaTooNew(too_new_message(current))
    if current == len(MIGRATIONS):
        return current
    db.execute_sql("PRAGMA foreign_keys = OFF")
    try:
        for version, step in enumerate(MIGRATIONS[current:], start=current + 1):
            with migrator.migration_context():
                step(db, migrator)
                broken = db.execute_sql("PRAGMA foreign_key_check").fetchall()
                if broken:
                    raise RuntimeError(f"migration {version} broke foreign keys: {broken[:5]}")
                db.execute_sql(f"PRAGMA user_version = {version:d}")
    finally:
        db.execute_sql("PRAGMA foreign_keys = ON")
    return schema_version(db)
