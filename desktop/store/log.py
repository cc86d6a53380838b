"""The durable event log: append and read in plain SQL on the store thread's connection (the
caller owns the transaction), the hot path of every published event. Positions come from
SQLite (AUTOINCREMENT, never reused) and `seq` numbers each aggregate's events without a gap.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass, field
from typing import Any

_DUMPS = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def now_ms() -> int:
    return int(time.time() * 1000)


def dumps(value: object) -> str:
    return _DUMPS(value)


@dataclass(frozen=True, slots=True)
class Event:
    position: int
    id: str
    aggregate_id: str
    seq: int
    type: str
    version: int
    created: int
    data: dict[str, Any]
    # The stored JSON of `data` when the event was read from a log: a replay writes it back
    # as it was instead of encoding it again.
    raw: str | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, object]:
        """The API's event shape (log route, SSE `properties`): every field but `raw`, and
        the aggregate's id again as `session_id`."""
        shape = {name: getattr(self, name) for name in _API_FIELDS}
        shape["session_id"] = self.aggregate_id
        return shape


_API_FIELDS = ("id", "position", "type", "aggregate_id", "seq", "version", "created", "data")


_COLUMNS = "position, id, aggregate_id, seq, type, version, created, data"


def _event(row: tuple[Any, ...]) -> Event:
    return Event(row[0], row[1], row[2], row[3], row[4], row[5], row[6], json.loads(row[7]), row[7])


def last_seq(conn: sqlite3.Connection, aggregate_id: str) -> int:
    row = conn.execute(
        "SELECT MAX(seq) FROM event WHERE aggregate_id = ?", (aggregate_id,)
    ).fetchone()
    return int(row[0] or 0)


def insert(
    conn: sqlite3.Connection,
    *,
    event_id: str,
    aggregate_id: str,
    seq: int,
    event_type: str,
    version: int,
    created: int,
    data: dict[str, Any],
    position: int | None = None,
) -> Event:
    cursor = conn.execute(
        "INSERT INTO event (position, id, aggregate_id, seq, type, version, created, data) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (position, event_id, aggregate_id, seq, event_type, version, created, dumps(data)),
    )
    assigned = position if position is not None else cursor.lastrowid
    assert assigned is not None
    return Event(assigned, event_id, aggregate_id, seq, event_type, version, created, data)


def insert_many(conn: sqlite3.Connection, events: list[Event]) -> None:
    """Insert events whose positions are already assigned (one statement for all)."""
    conn.executemany(
        "INSERT INTO event (position, id, aggregate_id, seq, type, version, created, data) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                e.position,
                e.id,
                e.aggregate_id,
                e.seq,
                e.type,
                e.version,
                e.created,
                e.raw if e.raw is not None else dumps(e.data),
            )
            for e in events
        ],
    )


def head(conn: sqlite3.Connection) -> int:
    """The highest position ever assigned (deleted events included): resume never goes back."""
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'event'").fetchone()
    return int(row[0]) if row else 0


def after(conn: sqlite3.Connection, position: int, limit: int) -> list[Event]:
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM event WHERE position > ? ORDER BY position LIMIT ?",
        (position, limit),
    ).fetchall()
    return [_event(r) for r in rows]


def session_log(
    conn: sqlite3.Connection, aggregate_id: str, after_seq: int, limit: int
) -> list[Event]:
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM event WHERE aggregate_id = ? AND seq > ? ORDER BY seq LIMIT ?",
        (aggregate_id, after_seq, limit),
    ).fetchall()
    return [_event(r) for r in rows]


def delete_aggregate(conn: sqlite3.Connection, aggregate_id: str, keep_position: int) -> None:
    conn.execute(
        "DELETE FROM event WHERE aggregate_id = ? AND position != ?", (aggregate_id, keep_position)
    )
