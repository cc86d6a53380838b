"""Schema migrations, applied in order and tracked with SQLite's `user_version`."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import peewee
from playhouse.migrate import SqliteMigrator

from desktop.store.models import (
    EventRow,
    InboxRow,
    JobRow,
    KvRow,
    MessageRow,
    Preference,
    SessionRow,
)

Migration = Callable[[peewee.SqliteDatabase, SqliteMigrator], None]


class SchemaTooNew(RuntimeError):
    """The database was written by a newer Desk; it is left untouched."""


def _initial(db: peewee.SqliteDatabase, migrator: SqliteMigrator) -> None:
    db.create_tables([Preference])


def _sessions(db: peewee.SqliteDatabase, migrator: SqliteMigrator) -> None:
    db.create_tables([SessionRow, EventRow, MessageRow, InboxRow, KvRow])


# Version 3 folds the jobs' two kv families into the `job` table: settled jobs' records
# (`job.record/<session>/<job>`, the API's job shape) and background markers
# (`job.background/<notification id>`, a notice still owed). A job with both becomes one row.
_RECORDS, _MARKERS = "job.record/", "job.background/"
_STATUSES = ("running", "completed", "error", "cancelled")
_RECOVERY_FIELDS = {
    "shell": ("session_id", "call_id", "job_key", "command"),
    "subagent": ("parent_id", "child_id", "agent", "description"),
}


def _old_record(value: Any) -> dict[str, Any] | None:
    ok = (
        isinstance(value, dict)
        and isinstance(value.get("id"), str)
        and value.get("type") in _RECOVERY_FIELDS
        and value.get("status") in _STATUSES[1:]
        and isinstance(value.get("title"), str)
        and isinstance(value.get("time"), dict)
    )
    return value if ok else None


def _old_marker(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, dict) or value.get("status") not in _STATUSES:
        return None
    recovery = value.get("recovery")
    kind = recovery.get("kind") if isinstance(recovery, dict) else None
    fields = _RECOVERY_FIELDS.get(kind) if isinstance(kind, str) else None
    if fields is None or not isinstance(recovery, dict):
        return None
    texts = [value.get("id"), value.get("notification_id"), *(recovery.get(f) for f in fields)]
    optional = [value.get("output"), value.get("error")]
    if all(isinstance(t, str) for t in texts) and all(
        o is None or isinstance(o, str) for o in optional
    ):
        return value
    return None


def _marker_row(marker: dict[str, Any], record: dict[str, Any] | None) -> dict[str, Any]:
    r = marker["recovery"]
    shell = r["kind"] == "shell"
    data = (
        dict(record)
        if record is not None
        else {
            "id": marker["id"],
            "type": r["kind"],
            "title": r["command"] if shell else r["description"],
            "background": True,
            "time": {"started": None, "completed": None},
            **(
                {"call_id": r["call_id"], "job_key": r["job_key"]}
                if shell
                else {"child_id": r["child_id"]}
            ),
        }
    )
    data.update(status=marker["status"], background=True, notification_id=marker["notification_id"])
    if isinstance(marker.get("error"), str):
        data["error"] = marker["error"]
    return {
        "session_id": r["session_id"] if shell else r["parent_id"],
        "owed": True,
        "notification_id": marker["notification_id"],
        "data": data,
        "recovery": r,
        "output": marker.get("output") if isinstance(marker.get("output"), str) else None,
    }


def _jobs(db: peewee.SqliteDatabase, migrator: SqliteMigrator) -> None:
    db.create_tables([JobRow])
    rows: dict[str, dict[str, Any]] = {}
    found = db.execute_sql(
        "SELECT key, value, updated FROM kv WHERE substr(key, 1, ?) = ? OR substr(key, 1, ?) = ?",
        (len(_RECORDS), _RECORDS, len(_MARKERS), _MARKERS),
    ).fetchall()
    updated = {key: stamp for key, _, stamp in found}
    for key, raw, _ in found:
        record = _old_record(json.loads(raw)) if key.startswith(_RECORDS) else None
        if record is not None:
            session_id = key[len(_RECORDS) :].split("/", 1)[0]
            rows[record["id"]] = {
                "session_id": session_id,
                "owed": False,
                "notification_id": record.get("notification_id"),
                "data": record,
                "recovery": None,
                "output": None,
                "key": key,
            }
    for key, raw, _ in found:
        marker = _old_marker(json.loads(raw)) if key.startswith(_MARKERS) else None
        if marker is not None:
            before = rows.get(marker["id"])
            rows[marker["id"]] = {**_marker_row(marker, before and before["data"]), "key": key}
    for job_id, row in rows.items():
        time = row["data"].get("time", {})
        completed = time.get("completed") if row["data"]["status"] != "running" else None
        JobRow.insert(
            id=job_id,
            session_id=row["session_id"],
            owed=row["owed"],
            notification_id=row["notification_id"],
            completed=completed if isinstance(completed, int) else None,
            data=row["data"],
            recovery=row["recovery"],
            output=row["output"],
            updated=updated[row["key"]],
        ).execute()
    db.execute_sql(
        "DELETE FROM kv WHERE substr(key, 1, ?) = ? OR substr(key, 1, ?) = ?",
        (len(_RECORDS), _RECORDS, len(_MARKERS), _MARKERS),
    )


MIGRATIONS: list[Migration] = [_initial, _sessions, _jobs]


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
    """Bring the schema up to date; returns the resulting version.

    Each step runs inside `migrator.migration_context()` (one transaction) together with its
    version bump, so a crash mid-migration leaves the previous schema intact. Foreign keys are
    switched off around the steps (SQLite ignores that pragma inside a transaction) so a table
    rebuild by the migrator cannot cascade deletes; `foreign_key_check` then proves the
    result consistent before they are switched back on. A database newer than this code is
    refused before anything is written.
    """
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
