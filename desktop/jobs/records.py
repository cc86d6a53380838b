"""Settled job records: `kv` rows `job.record/<session id>/<job id>`, so a session's jobs list
outlives the process that ran them.

The registry holds this process's jobs in memory and the markers hold only notices still
owed; without records, a restart of the service emptied the jobs panel of every job that had
ended (and the links from tool calls to their jobs' tabs). A record is the API's job shape
(`service.job_json`), written each time a job of this process changes while settled (its
notice id can follow its end), read for `GET /api/session/{id}/jobs` under the jobs the
registry and the markers know, and removed by the cleanup sweep with the job terminals it
describes: once older than the retention, or when its session is gone.

A row that does not decode (damaged, or written by a newer Desk) is skipped, never fatal.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from desktop.jobs.markers import STATUSES
from desktop.store import log
from desktop.store import sessions as q
from desktop.store.db import Store

PREFIX = "job.record/"
SETTLED = tuple(status for status in STATUSES if status != "running")
TYPES = ("shell", "subagent")  # the registry's job kinds (markers' recovery kinds)


def key(session_id: str, job_id: str) -> str:
    return f"{PREFIX}{session_id}/{job_id}"


def decode(value: object) -> dict[str, Any] | None:
    """The job a record holds, or None when it is not a settled job's shape."""
    if not isinstance(value, dict):
        return None
    time = value.get("time")
    if not (
        isinstance(value.get("id"), str)
        and value.get("type") in TYPES
        and value.get("status") in SETTLED
        and isinstance(value.get("title"), str)
        and isinstance(time, dict)
    ):
        return None
    return value


def completed_at(job: dict[str, Any]) -> int | None:
    completed = job["time"].get("completed")
    return completed if isinstance(completed, int) else None


# Store-thread functions ------------------------------------------------------------------


def of_session(conn: sqlite3.Connection, session_id: str) -> list[dict[str, Any]]:
    found = (decode(v) for v in q.kv_prefix(conn, f"{PREFIX}{session_id}/").values())
    return [job for job in found if job is not None]


def expire(conn: sqlite3.Connection, cutoff: int) -> int:
    """Remove the records older than `cutoff` (ms), of sessions that are gone, or that do not
    decode; how many went. Call inside a transaction."""
    removed = 0
    alive: dict[str, bool] = {}
    for row_key, value in q.kv_prefix(conn, PREFIX).items():
        session_id = row_key[len(PREFIX) :].split("/", 1)[0]
        if session_id not in alive:
            alive[session_id] = q.get_session(conn, session_id) is not None
        job = decode(value)
        ended = None if job is None else completed_at(job)
        if job is None or not alive[session_id] or (ended is not None and ended < cutoff):
            removed += q.kv_delete(conn, row_key)
    return removed


class RecordStore:
    """The records through the store thread: one short transaction per call."""

    def __init__(self, store: Store) -> None:
        self.store = store

    async def put(self, session_id: str, job: dict[str, Any]) -> None:
        def run() -> None:
            with self.store.db.atomic():
                q.kv_set(self.store.connection(), key(session_id, job["id"]), job, log.now_ms())

        await self.store.run(run)

    async def get(self, session_id: str, job_id: str) -> dict[str, Any] | None:
        return await self.store.run(
            lambda: decode(q.kv_get(self.store.connection(), key(session_id, job_id)))
        )

    async def of_session(self, session_id: str) -> list[dict[str, Any]]:
        return await self.store.run(lambda: of_session(self.store.connection(), session_id))

    async def expire(self, cutoff: int) -> int:
        def run() -> int:
            with self.store.db.atomic():
                return expire(self.store.connection(), cutoff)

        return await self.store.run(run)
