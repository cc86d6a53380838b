"""A background job: the one model of a job on the service side, its API shape
(`Job.to_json`) and its stored row (the `job` table, one row per job).
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from desktop.events.errors import SessionError
from desktop.store import log
from desktop.store.db import Store

Status = Literal["running", "completed", "error", "cancelled"]
STATUSES: tuple[Status, ...] = ("running", "completed", "error", "cancelled")
TYPES = ("shell", "subagent")
_LINKS = ("call_id", "job_key", "terminal_id", "child_id")  # metadata the API shows


@dataclass(frozen=True, slots=True)
class ShellRecovery:
    """A shell call whose job runs in the PTY host under `job_key`; its notice goes to the
    call's session."""

    session_id: str
    call_id: str
    job_key: str
    command: str
    kind: Literal["shell"] = "shell"


@dataclass(frozen=True, slots=True)
class SubagentRecovery:
    """A child session run for `parent_id`; its notice goes to the parent."""

    parent_id: str
    child_id: str
    agent: str
    description: str
    kind: Literal["subagent"] = "subagent"


Recovery: TypeAlias = ShellRecovery | SubagentRecovery


@dataclass(frozen=True, slots=True)
class Job:
    id: str
    type: str
    status: Status
    started_at: int | None
    title: str | None = None
    completed_at: int | None = None
    output: str | None = None
    error: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    notification_id: str | None = None
    background: bool = False
    recovery: Recovery | None = None

    @classmethod
    def recovered(
        cls,
        job_id: str,
        notification_id: str,
        recovery: Recovery,
        status: Status,
        output: str | None = None,
        error: str | None = None,
    ) -> Job:
        """A background job known by what recovery needs of it (its start time unknown)."""
        return cls(
            job_id,
            recovery.kind,
            status,
            None,
            title=recovery.command if isinstance(recovery, ShellRecovery) else recovery.description,
            output=output,
            error=error,
            metadata=recovery_metadata(recovery),
            notification_id=notification_id,
            background=True,
            recovery=recovery,
        )

    @property
    def session_id(self) -> str | None:
        """The session whose jobs list shows it (a subagent's: its parent)."""
        value = self.metadata.get("session_id")
        if isinstance(value, str):
            return value
        r = self.recovery
        if r is None:
            return None
        return r.session_id if isinstance(r, ShellRecovery) else r.parent_id

    @property
    def owed(self) -> bool:
        """Backgrounded recoverable work: its notice is owed until admitted."""
        return self.background and self.recovery is not None and self.notification_id is not None

    def settled(self, status: Status, output: str | None, error: str | None) -> Job:
        return dataclasses.replace(
            self, status=status, completed_at=log.now_ms(), output=output, error=error
        )

    def to_json(self) -> dict[str, Any]:
        """The API's job shape (also the stored row's)."""
        out: dict[str, Any] = {
            "id": self.id,
            "type": self.type,
            "title": self.title,
            "status": self.status,
            "background": self.background,
            "time": {"started": self.started_at, "completed": self.completed_at},
            "notification_id": self.notification_id,
        }
        for key in _LINKS:
            if key in self.metadata:
                out[key] = self.metadata[key]
        if self.error is not None:
            out["error"] = self.error
        return out


def recovery_metadata(recovery: Recovery) -> dict[str, str]:
    if isinstance(recovery, ShellRecovery):
        return {
            "session_id": recovery.session_id,
            "call_id": recovery.call_id,
            "job_key": recovery.job_key,
        }
    return {"session_id": recovery.parent_id, "child_id": recovery.child_id}


def job_not_found(session_id: str, job_id: str) -> SessionError:
    return SessionError(404, "job.not_found", f"No job {job_id!r} in session {session_id!r}.")


# The stored row ------------------------------------------------------------------------


def _recovery_json(r: Recovery) -> dict[str, str]:
    return {f.name: getattr(r, f.name) for f in dataclasses.fields(r)}


def _str(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError("not a string")
    return value


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def decode_recovery(value: object) -> Recovery | None:
    if not isinstance(value, dict):
        return None
    v = {k: _str(x) for k, x in value.items()}
    if v.get("kind") == "shell":
        return ShellRecovery(v["session_id"], v["call_id"], v["job_key"], v["command"])
    if v.get("kind") == "subagent":
        return SubagentRecovery(v["parent_id"], v["child_id"], v["agent"], v["description"])
    raise ValueError("unknown recovery kind")


def decode(session_id: str, data: object, recovery: object, output: object) -> Job | None:
    """The job a row holds, or None when it is not a job's shape."""
    try:
        if not isinstance(data, dict) or not isinstance(data.get("time"), dict):
            return None
        status, kind, title = data.get("status"), data.get("type"), data.get("title")
        if status not in STATUSES or kind not in TYPES or not isinstance(title, str | None):
            return None
        error, notification_id = data.get("error"), data.get("notification_id")
        links = {k: _str(data[k]) for k in _LINKS if k in data}
        return Job(
            _str(data.get("id")),
            _str(kind),
            status,
            _int(data["time"].get("started")),
            title=title,
            completed_at=_int(data["time"].get("completed")),
            output=None if output is None else _str(output),
            error=None if error is None else _str(error),
            metadata={"session_id": session_id, **links},
            notification_id=None if notification_id is None else _str(notification_id),
            background=data.get("background") is True,
            recovery=decode_recovery(recovery),
        )
    except (ValueError, TypeError, KeyError):
        return None


_COLUMNS = "session_id, data, recovery, output"


def _decoded(rows: Sequence[tuple[Any, ...]]) -> list[Job]:
    found = (
        decode(sid, json.loads(data), json.loads(rec) if rec else None, out)
        for sid, data, rec, out in rows
    )
    return [job for job in found if job is not None]


# Store-thread functions (inside a transaction the caller owns) ----------------------------


def write(conn: sqlite3.Connection, jobs: Sequence[Job]) -> None:
    """Insert or update the jobs' rows. `owed` is only ever set here, never cleared (that is
    `acknowledge`'s): a job started again under its id keeps the notice it owes."""
    now = log.now_ms()
    conn.executemany(
        "INSERT INTO job (id, session_id, owed, notification_id, completed, data, recovery, "
        "output, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
        "session_id = excluded.session_id, owed = excluded.owed OR owed, "
        "notification_id = excluded.notification_id, completed = excluded.completed, "
        "data = excluded.data, recovery = excluded.recovery, output = excluded.output, "
        "updated = excluded.updated",
        [
            (
                job.id,
                job.session_id or "",
                job.owed,
                job.notification_id,
                job.completed_at,
                log.dumps(job.to_json()),
                None if job.recovery is None else log.dumps(_recovery_json(job.recovery)),
                job.output,
                now,
            )
            for job in jobs
        ],
    )


def acknowledge(conn: sqlite3.Connection, notification_id: str) -> bool:
    """The notice of `notification_id` was admitted (or its session is gone)."""
    cur = conn.execute(
        "UPDATE job SET owed = 0 WHERE notification_id = ? AND owed = 1", (notification_id,)
    )
    return cur.rowcount > 0


def owed(conn: sqlite3.Connection) -> list[Job]:
    rows = conn.execute(f"SELECT {_COLUMNS} FROM job WHERE owed = 1 ORDER BY id").fetchall()
    return _decoded(rows)


def unfinished(conn: sqlite3.Connection) -> list[Job]:
    """Jobs left running that owe no notice (a foreground call's wait, say)."""
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM job WHERE owed = 0 AND completed IS NULL ORDER BY id"
    ).fetchall()
    return [job for job in _decoded(rows) if job.status == "running"]


def of_session(conn: sqlite3.Connection, session_id: str) -> list[Job]:
    """The session's jobs, oldest first (unknown start times last)."""
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM job WHERE session_id = ?", (session_id,)
    ).fetchall()
    inf = float("inf")
    return sorted(
        _decoded(rows),
        key=lambda j: (inf if j.started_at is None else j.started_at, j.id),
    )


def get(conn: sqlite3.Connection, session_id: str, job_id: str) -> Job | None:
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM job WHERE id = ? AND session_id = ?", (job_id, session_id)
    ).fetchall()
    found = _decoded(rows)
    return found[0] if found else None


def expire(conn: sqlite3.Connection, cutoff: int) -> int:
    """Remove the rows that owe nothing and ended before `cutoff` (ms), belong to a session
    that is gone, or do not decode; how many went. Call inside a transaction."""
    removed = conn.execute(
        "DELETE FROM job WHERE owed = 0 AND ((completed IS NOT NULL AND completed < ?) "
        "OR session_id NOT IN (SELECT id FROM session))",
        (cutoff,),
    ).rowcount
    rows = conn.execute(f"SELECT id, {_COLUMNS} FROM job WHERE owed = 0").fetchall()
    for row in rows:
        if not _decoded([row[1:]]):
            removed += conn.execute("DELETE FROM job WHERE id = ?", (row[0],)).rowcount
    return removed


class JobStore:
    """The job rows through the store thread: one short transaction per call.

    A row holds the job's API shape, what restart recovery needs to find its work again
    (`recovery`), its output (a notice is built from it) and `owed`: the job was handed to the
    background and its notice is still to be admitted. `owed` is set when recoverable work is
    backgrounded and cleared only in the transaction that admits its notice (or when its session
    is gone); restart recovery reads the owed rows, which are its whole memory of background
    work. A row that does not decode is skipped, never fatal.
    """

    def __init__(self, store: Store) -> None:
        self.store = store

    async def put(self, jobs: Sequence[Job]) -> None:
        if jobs:
            await self.store.write(lambda conn: write(conn, jobs))

    async def owed(self) -> list[Job]:
        return await self.store.read(owed)

    async def unfinished(self) -> list[Job]:
        return await self.store.read(unfinished)

    async def acknowledge(self, notification_id: str) -> bool:
        return await self.store.write(lambda conn: acknowledge(conn, notification_id))

    async def of_session(self, session_id: str) -> list[Job]:
        return await self.store.read(lambda conn: of_session(conn, session_id))

    async def get(self, session_id: str, job_id: str) -> Job | None:
        return await self.store.read(lambda conn: get(conn, session_id, job_id))

    async def expire(self, cutoff: int) -> int:
        return await self.store.write(lambda conn: expire(conn, cutoff))
