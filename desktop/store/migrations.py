"""Schema migrations, applied in order and tracked with SQLite's `user_version`.

Each step runs inside one transaction with the version bump, so a crash mid-migration
leaves the previous schema intact. Later steps use peewee's SchemaMigrator for
ALTER TABLE work.
"""

from __future__ import annotations

from collections.abc import Callable

import peewee
from playhouse.migrate import SqliteMigrator

from desktop.store.models import Preference

Migration = Callable[[peewee.SqliteDatabase, SqliteMigrator], None]


def _initial(db: peewee.SqliteDatabase, migrator: SqliteMigrator) -> None:
    db.create_tables([Preference])


MIGRATIONS: list[Migration] = [_initial]


def schema_version(db: peewee.SqliteDatabase) -> int:
    row = db.execute_sql("PRAGMA user_version").fetchone()
    return int(row[0]) if row else 0


def migrate(db: peewee.SqliteDatabase) -> int:
    """Bring the schema up to date; returns the resulting version."""
    migrator = SqliteMigrator(db)
    current = schema_version(db)
    if current > len(MIGRATIONS):
        raise RuntimeError(
            f"The database schema (version {current}) is newer than this Desk "
            f"(knows {len(MIGRATIONS)}); refusing to touch it."
        )
    for version, step in enumerate(MIGRATIONS[current:], start=current + 1):
        with db.atomic():
            step(db, migrator)
            db.execute_sql(f"PRAGMA user_version = {version:d}")
    return schema_version(db)
