"""Reads and small writes of the session tables, as plain functions on the store thread's
connection, and the one place the API's session status is derived: `busy` while the
execution claim (`time_suspended`) is held, otherwise the projected `idle` or `error`.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from desktop.store.log import dumps

_SESSION = "id, parent_id, title, directory, status, created, updated, time_suspended"


def _session_json(row: tuple[Any, ...]) -> dict[str, object]:
    return {
        "id": row[0],
        "title": row[2],
        "parent_id": row[1],
        "directory": row[3],
        "status": "busy" if row[7] is not None else row[4],
        "time": {"created": row[5], "updated": row[6]},
    }


def get_session(conn: sqlite3.Connection, session_id: str) -> dict[str, object] | None:
    row = conn.execute(f"SELECT {_SESSION} FROM session WHERE id = ?", (session_id,)).fetchone()
    return None if row is None else _session_json(row)


def list_sessions(conn: sqlite3.Connection) -> list[dict[str, object]]:
    rows = conn.execute(f"SELECT {_SESSION} FROM session ORDER BY updated DESC, id DESC").fetchall()
    return [_session_json(r) for r in rows]


def descendants(conn: sqlite3.Connection, session_id: str) -> list[str]:
    """The session and every session below it, parents first."""
    rows = conn.execute(
        "WITH RECURSIVE tree(id, depth) AS (SELECT ?, 0 UNION ALL "
        "SELECT s.id, depth + 1 FROM session s JOIN tree ON s.parent_id = tree.id) "
        "SELECT id FROM tree ORDER BY depth",
        (session_id,),
    ).fetchall()
    return [r[0] for r in rows]


# Messages ------------------------------------------------------------------------------


def message(conn: sqlite3.Connection, message_id: str) -> tuple[str, dict[str, Any]] | None:
    """(session id, message) of one message."""
    row = conn.execute(
        "SELECT session_id, data FROM message WHERE id = ?", (message_id,)
    ).fetchone()
    return None if row is None else (row[0], json.loads(row[1]))


def messages_page(
    conn: sqlite3.Connection,
    session_id: str,
    limit: int,
    before: int | None = None,
    after: int | None = None,
) -> tuple[list[dict[str, Any]], int | None, int | None]:
    """A page of messages in order, with the cursors (message seqs) of the older and the
    newer neighbouring pages, or None where there is nothing more. Without `before` or
    `after` the page is the latest one."""
    if after is not None:
        rows = conn.execute(
            "SELECT seq, data FROM message WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?",
            (session_id, after, limit + 1),
        ).fetchall()
        more_newer = len(rows) > limit
        rows = rows[:limit]
        more_older = bool(rows) or after > 0
    else:
        bound = before if before is not None else 2**62
        rows = conn.execute(
            "SELECT seq, data FROM message WHERE session_id = ? AND seq < ? "
            "ORDER BY seq DESC LIMIT ?",
            (session_id, bound, limit + 1),
        ).fetchall()
        more_older = len(rows) > limit
        rows = rows[:limit][::-1]
        more_newer = before is not None
    if rows and more_older:
        more_older = (
            conn.execute(
                "SELECT 1 FROM message WHERE session_id = ? AND seq < ? LIMIT 1",
                (session_id, rows[0][0]),
            ).fetchone()
            is not None
        )
    if rows and more_newer:
        more_newer = (
            conn.execute(
                "SELECT 1 FROM message WHERE session_id = ? AND seq > ? LIMIT 1",
                (session_id, rows[-1][0]),
            ).fetchone()
            is not None
        )
    older = rows[0][0] if rows and more_older else None
    newer = rows[-1][0] if rows and more_newer else None
    return [json.loads(r[1]) for r in rows], older, newer


def all_messages(conn: sqlite3.Connection, session_id: str) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT data FROM message WHERE session_id = ? ORDER BY seq", (session_id,)
    ).fetchall()
    return [json.loads(r[0]) for r in rows]


def open_tool_calls(conn: sqlite3.Connection, session_id: str) -> set[str]:
    """Call ids of the session's tool parts still open (`streaming` or `running`): calls a
    turn waits for, or that a restart will settle (adopting their job)."""
    rows = conn.execute(
        "SELECT json_extract(p.value, '$.id') FROM message m, json_each(m.data, '$.content') p "
        "WHERE m.session_id = ? AND json_extract(p.value, '$.type') = 'tool' "
        "AND json_extract(p.value, '$.state.status') IN ('streaming', 'running')",
        (session_id,),
    ).fetchall()
    return {r[0] for r in rows if isinstance(r[0], str)}


# The execution claim: taken by a prompt (with its inbox row) and by the runner when a turn
# starts, released on a terminal event (through the bus's commit hook, atomically with it),
# resumes counted at restart. ---------------------------------------------------------------


def claim(conn: sqlite3.Connection, session_id: str, now: int) -> bool:
    """Take the claim; False when the session does not exist."""
    cur = conn.execute(
        "UPDATE session SET time_suspended = COALESCE(time_suspended, ?) WHERE id = ?",
        (now, session_id),
    )
    return cur.rowcount == 1


def release(conn: sqlite3.Connection, session_id: str) -> None:
    conn.execute(
        "UPDATE session SET time_suspended = NULL, resume_attempts = 0 WHERE id = ?", (session_id,)
    )


def count_resume(conn: sqlite3.Connection, session_id: str) -> int | None:
    """One more resume of an orphaned claim, durably counted; None when the session is gone."""
    row = conn.execute(
        "UPDATE session SET resume_attempts = resume_attempts + 1 WHERE id = ? "
        "RETURNING resume_attempts",
        (session_id,),
    ).fetchone()
    return None if row is None else int(row[0])


def list_suspended(conn: sqlite3.Connection) -> list[str]:
    """Top-level sessions holding a claim (restart recovery resumes them)."""
    rows = conn.execute(
        "SELECT id FROM session WHERE time_suspended IS NOT NULL AND parent_id IS NULL "
        "ORDER BY time_suspended"
    ).fetchall()
    return [r[0] for r in rows]


def release_child_claims(conn: sqlite3.Connection, keep: list[str]) -> None:
    marks = ",".join("?" * len(keep))
    extra = f" AND id NOT IN ({marks})" if keep else ""
    conn.execute(
        "UPDATE session SET time_suspended = NULL, resume_attempts = 0 "
        f"WHERE time_suspended IS NOT NULL AND parent_id IS NOT NULL{extra}",
        keep,
    )


# Inbox ---------------------------------------------------------------------------------


def inbox_add(
    conn: sqlite3.Connection,
    *,
    inbox_id: str,
    session_id: str,
    mode: str,
    kind: str,
    data: dict[str, Any],
    created: int,
) -> None:
    conn.execute(
        "INSERT INTO inbox (id, session_id, mode, kind, data, created) VALUES (?, ?, ?, ?, ?, ?)",
        (inbox_id, session_id, mode, kind, dumps(data), created),
    )


def inbox_pending(conn: sqlite3.Connection, session_id: str) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT id, mode, kind, data, created FROM inbox WHERE session_id = ? ORDER BY created, id",
        (session_id,),
    ).fetchall()
    return [
        {"id": r[0], "mode": r[1], "kind": r[2], "data": json.loads(r[3]), "created": r[4]}
        for r in rows
    ]


def inbox_take(conn: sqlite3.Connection, ids: list[str]) -> int:
    """Remove delivered inbox rows (call inside the transaction that records the delivery)."""
    marks = ",".join("?" * len(ids))
    return conn.execute(f"DELETE FROM inbox WHERE id IN ({marks})", ids).rowcount if ids else 0


# Durable markers -----------------------------------------------------------------------


def kv_get(conn: sqlite3.Connection, key: str) -> object:
    row = conn.execute("SELECT value FROM kv WHERE key = ?", (key,)).fetchone()
    return None if row is None else json.loads(row[0])


def kv_set(conn: sqlite3.Connection, key: str, value: object, now: int) -> None:
    conn.execute(
        "INSERT INTO kv (key, value, updated) VALUES (?, ?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated = excluded.updated",
        (key, dumps(value), now),
    )


def kv_delete(conn: sqlite3.Connection, key: str) -> bool:
    return conn.execute("DELETE FROM kv WHERE key = ?", (key,)).rowcount == 1


def kv_prefix(conn: sqlite3.Connection, prefix: str) -> dict[str, object]:
    """Every marker whose key starts with `prefix` (for example `job.background/`)."""
    upper = prefix + "\U0010ffff"
    rows = conn.execute(
        "SELECT key, value FROM kv WHERE key >= ? AND key < ? ORDER BY key", (prefix, upper)
    ).fetchall()
    return {r[0]: json.loads(r[1]) for r in rows}
