"""The SQLite store: pragmas, schema migrations, refusal of a newer database, markers."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import peewee
import pytest
from playhouse.migrate import SqliteMigrator

from desktop.jobs import model as jobs
from desktop.store import sessions as q
from desktop.store.db import Store
from desktop.store.migrations import MIGRATIONS, SchemaTooNew
from desktop.store.models import database_proxy
from tests.support.sessions import create_here, open_here


async def test_a_fresh_database_has_wal_foreign_keys_normal_sync_and_every_table(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "desk.sqlite3")
    await store.open()

    def read() -> tuple[object, ...]:
        c = store.connection()
        tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        return (
            c.execute("PRAGMA journal_mode").fetchone()[0],
            c.execute("PRAGMA foreign_keys").fetchone()[0],
            c.execute("PRAGMA synchronous").fetchone()[0],
            c.execute("PRAGMA user_version").fetchone()[0],
            tables,
        )

    mode, fks, sync, version, tables = await store.run(read)
    await store.close()
    assert (mode, fks, sync, version) == ("wal", 1, 1, len(MIGRATIONS))
    assert {"session", "event", "message", "inbox", "kv", "preference", "job"} <= tables  # type: ignore[operator]
    assert oct((tmp_path / "desk.sqlite3").stat().st_mode & 0o777) == "0o600"


def test_a_database_newer_than_the_code_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "desk.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE future (x)")
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    conn.commit()
    conn.close()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(SchemaTooNew, match="newer than this Desk"):
        open_here(path)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    assert not (tmp_path / "desk.sqlite3-wal").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["desk.sqlite3"]


def test_a_version_one_database_is_migrated_and_keeps_its_preferences(tmp_path: Path) -> None:
    path = tmp_path / "desk.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute(
        'CREATE TABLE "preference" ("key" VARCHAR(200) NOT NULL PRIMARY KEY, '
        '"value" TEXT NOT NULL, "updated" INTEGER NOT NULL)'
    )
    conn.execute("""INSERT INTO preference VALUES ('theme', '"dark"', 1)""")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    store = open_here(path)
    c = store.connection()
    assert c.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert c.execute("SELECT value FROM preference").fetchall() == [('"dark"',)]
    assert c.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    create_here(store, "ses_after_migration")
    assert q.get_session(c, "ses_after_migration") is not None


def test_markers_and_inbox_survive_a_reopen(tmp_path: Path) -> None:
    path = tmp_path / "desk.sqlite3"
    store = open_here(path)
    create_here(store, "ses_k")
    c = store.connection()
    with store.db.atomic():
        q.kv_set(c, "job.background/n1", {"state": "running"}, 1)
        q.kv_set(c, "job.background/n2", {"state": "done"}, 2)
        q.kv_set(c, "other", 1, 3)
        q.inbox_add(
            c,
            inbox_id="m1",
            session_id="ses_k",
            mode="steer",
            kind="user",
            data={"text": "x"},
            created=5,
        )
    store.db.close()
    again = open_here(path)
    c = again.connection()
    assert q.kv_prefix(c, "job.background/") == {
        "job.background/n1": {"state": "running"},
        "job.background/n2": {"state": "done"},
    }
    assert [r["id"] for r in q.inbox_pending(c, "ses_k")] == ["m1"]
    assert q.inbox_take(c, ["m1"]) == 1
    assert q.inbox_pending(c, "ses_k") == []
    assert q.kv_delete(c, "other")
    assert q.kv_get(c, "other") is None


def test_the_claim_counts_resumes_and_children_are_released_except_kept_ones(
    tmp_path: Path,
) -> None:
    store = open_here(tmp_path / "desk.sqlite3")
    for sid in ("ses_root", "ses_kid1", "ses_kid2"):
        create_here(store, sid)
    c = store.connection()
    c.execute("UPDATE session SET parent_id = 'ses_root' WHERE id != 'ses_root'")
    for sid in ("ses_root", "ses_kid1", "ses_kid2"):
        assert q.claim(c, sid, 10)
    assert q.list_suspended(c) == ["ses_root"]
    assert q.count_resume(c, "ses_root") == 1
    assert q.count_resume(c, "ses_root") == 2
    assert q.count_resume(c, "ses_gone") is None
    q.release_child_claims(c, ["ses_kid2"])
    statuses = {s["id"]: s["status"] for s in q.list_sessions(c)}
    assert statuses == {"ses_root": "busy", "ses_kid1": "idle", "ses_kid2": "busy"}
    q.release(c, "ses_root")
    assert q.list_suspended(c) == []


def _version_two(path: Path) -> sqlite3.Connection:
    """A database as Desk left it before the job table (schema version 2)."""
    db = peewee.SqliteDatabase(str(path))
    database_proxy.initialize(db)
    db.connect()
    for step in MIGRATIONS[:2]:
        step(db, SqliteMigrator(db))
    db.close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 2")
    conn.execute(
        "INSERT INTO session (id, parent_id, title, directory, status, created, updated, "
        "resume_attempts) VALUES ('ses_m', NULL, 't', '/', 'idle', 1, 1, 0)"
    )
    return conn


def test_a_version_two_database_folds_job_records_and_markers_into_one_row_per_job(
    tmp_path: Path,
) -> None:
    path = tmp_path / "desk.sqlite3"
    conn = _version_two(path)
    ended = {
        "id": "job:ses_m:call_1",
        "type": "shell",
        "title": "echo one",
        "status": "completed",
        "background": False,
        "time": {"started": 10, "completed": 20},
        "notification_id": None,
        "call_id": "call_1",
        "job_key": "job:ses_m:call_1",
        "terminal_id": "term_1",
    }
    moved = {**ended, "id": "job:ses_m:call_2", "title": "echo two", "call_id": "call_2"}
    shell: dict[str, object] = {"kind": "shell", "session_id": "ses_m", "call_id": "call_2"}
    shell |= {"job_key": "job:ses_m:call_2", "command": "echo two"}
    owed_shell: dict[str, object] = {
        "id": "job:ses_m:call_2",
        "notification_id": "msg_2",
        "status": "completed",
    }
    owed_shell |= {"recovery": shell, "output": "two"}
    child: dict[str, object] = {"kind": "subagent", "parent_id": "ses_m", "child_id": "ses_child"}
    child |= {"agent": "subagent", "description": "look around"}
    owed_child: dict[str, object] = {
        "id": "ses_child",
        "notification_id": "msg_3",
        "status": "running",
    }
    owed_child |= {"recovery": child}
    rows = [
        ("job.record/ses_m/job:ses_m:call_1", ended),
        ("job.record/ses_m/job:ses_m:call_2", moved),
        ("job.background/msg_2", owed_shell),
        ("job.background/msg_3", owed_child),
        ("job.record/ses_m/bad", {"id": 7}),
        ("permission/ses_m/mode", "ask"),
    ]
    conn.executemany(
        "INSERT INTO kv (key, value, updated) VALUES (?, ?, 1)",
        [(key, json.dumps(value)) for key, value in rows],
    )
    conn.commit()
    conn.close()

    store = open_here(path)
    c = store.connection()
    assert c.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert q.kv_prefix(c, "") == {"permission/ses_m/mode": "ask"}
    listed = jobs.of_session(c, "ses_m")
    assert [j.id for j in listed] == ["job:ses_m:call_1", "job:ses_m:call_2", "ses_child"]
    assert listed[0].to_json() == ended
    assert not listed[0].owed
    assert listed[1].to_json() == {**moved, "background": True, "notification_id": "msg_2"}
    assert (listed[1].output, listed[1].recovery) == (
        "two",
        jobs.ShellRecovery("ses_m", "call_2", "job:ses_m:call_2", "echo two"),
    )
    assert listed[2].to_json() == {
        "id": "ses_child",
        "type": "subagent",
        "title": "look around",
        "status": "running",
        "background": True,
        "time": {"started": None, "completed": None},
        "notification_id": "msg_3",
        "child_id": "ses_child",
    }
    assert [(j.id, j.notification_id) for j in jobs.owed(c)] == [
        ("job:ses_m:call_2", "msg_2"),
        ("ses_child", "msg_3"),
    ]
