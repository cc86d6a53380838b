"""Durable background markers: `kv` rows `job.background/<notification id>`.

A marker says "this work was handed to the background and its notice is still owed". It is
written when work is backgrounded (also when recoverable work had already finished), updated
when the work settles, and removed only in the transaction that admits its notice (or when
its session is gone). Restart recovery reads every marker left; that is its whole memory of
background work, so the format is the one place these rules are written down:

    {"id": "<job id>", "notification_id": "msg_...", "status": "running|completed|error|cancelled",
     "recovery": {"kind": "shell", "session_id", "call_id", "job_key", "command"}
               | {"kind": "subagent", "parent_id", "child_id", "agent", "description"},
     "output"?: "<text>", "error"?: "<text>"}

A row that does not decode (written by a newer Desk, or damaged) is skipped, never fatal.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from desktop.store import log
from desktop.store import sessions as q
from desktop.store.db import Store

PREFIX = "job.background/"

Status = Literal["running", "completed", "error", "cancelled"]
STATUSES: tuple[Status, ...] = ("running", "completed", "error", "cancelled")


@dataclass(frozen=True, slots=True)
class ShellRecovery:
    """A shell call whose job runs in the PTY host under `job_key`."""

    session_id: str
    call_id: str
    job_key: str
    command: str
    kind: Literal["shell"] = "shell"

    @property
    def session(self) -> str:
        """The session its notice goes to."""
        return self.session_id


@dataclass(frozen=True, slots=True)
class SubagentRecovery:
    """A child session run for `parent_id`; its notice goes to the parent."""

    parent_id: str
    child_id: str
    agent: str
    description: str
    kind: Literal["subagent"] = "subagent"

    @property
    def session(self) -> str:
        return self.parent_id


Recovery: TypeAlias = ShellRecovery | SubagentRecovery


@dataclass(frozen=True, slots=True)
class Marker:
    id: str
    notification_id: str
    recovery: Recovery
    status: Status
    output: str | None = None
    error: str | None = None

    @property
    def key(self) -> str:
        return key(self.notification_id)

    def to_json(self) -> dict[str, Any]:
        r = self.recovery
        recovery: dict[str, str] = (
            {
                "kind": "shell",
                "session_id": r.session_id,
                "call_id": r.call_id,
                "job_key": r.job_key,
                "command": r.command,
            }
            if isinstance(r, ShellRecovery)
            else {
                "kind": "subagent",
                "parent_id": r.parent_id,
                "child_id": r.child_id,
                "agent": r.agent,
                "description": r.description,
            }
        )
        out: dict[str, Any] = {
            "id": self.id,
            "notification_id": self.notification_id,
            "recovery": recovery,
            "status": self.status,
        }
        if self.output is not None:
            out["output"] = self.output
        if self.error is not None:
            out["error"] = self.error
        return out


def key(notification_id: str) -> str:
    return PREFIX + notification_id


def _str(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError("not a string")
    return value


def _recovery(value: object) -> Recovery:
    if not isinstance(value, dict):
        raise ValueError("recovery is not an object")
    if value.get("kind") == "shell":
        return ShellRecovery(
            _str(value.get("session_id")),
            _str(value.get("call_id")),
            _str(value.get("job_key")),
            _str(value.get("command")),
        )
    if value.get("kind") == "subagent":
        return SubagentRecovery(
            _str(value.get("parent_id")),
            _str(value.get("child_id")),
            _str(value.get("agent")),
            _str(value.get("description")),
        )
    raise ValueError("unknown recovery kind")


def decode(value: object) -> Marker | None:
    """The marker a kv value holds, or None when it is not one."""
    if not isinstance(value, dict):
        return None
    try:
        status = value.get("status")
        if status not in STATUSES:
            return None
        output, error = value.get("output"), value.get("error")
        return Marker(
            _str(value.get("id")),
            _str(value.get("notification_id")),
            _recovery(value.get("recovery")),
            status,
            None if output is None else _str(output),
            None if error is None else _str(error),
        )
    except ValueError:
        return None


# Store-thread functions (inside a transaction the caller owns) ----------------------------


def write(conn: sqlite3.Connection, markers: list[Marker]) -> None:
    now = log.now_ms()
    for marker in markers:
        q.kv_set(conn, marker.key, marker.to_json(), now)


def remove(conn: sqlite3.Connection, notification_id: str) -> bool:
    return q.kv_delete(conn, key(notification_id))


def read_all(conn: sqlite3.Connection) -> list[Marker]:
    found = (decode(v) for v in q.kv_prefix(conn, PREFIX).values())
    return [m for m in found if m is not None]


class MarkerStore:
    """The markers through the store thread: one short transaction per call."""

    def __init__(self, store: Store) -> None:
        self.store = store

    async def put(self, markers: list[Marker]) -> None:
        if not markers:
            return

        def run() -> None:
            with self.store.db.atomic():
                write(self.store.connection(), markers)

        await self.store.run(run)

    async def pending(self) -> list[Marker]:
        return await self.store.run(lambda: read_all(self.store.connection()))

    async def remove(self, notification_id: str) -> bool:
        def run() -> bool:
            with self.store.db.atomic():
                return remove(self.store.connection(), notification_id)

        return await self.store.run(run)
