"""The durable bus: publishing appends events and applies their projection in one
transaction on the store thread, then fans them out; ephemeral events are only fanned out.

One writer task owns the queue of publish requests. While a batch is being written, new
requests wait, and the next batch takes all of them: one transaction (one commit) per
batch, one savepoint per request, so a request whose projection fails is rolled back alone
and its caller gets the error while the rest of the batch commits. The event loop never
waits on SQLite and no transaction ever spans an `await`: each batch is one function
submitted to the store thread. Fan-out happens after the commit, in position order.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from desktop.session.errors import ProjectionError, SessionError
from desktop.session.fanout import Fanout, encode_event
from desktop.session.ids import new_id
from desktop.session.projector import Projection, project
from desktop.session.schema import validate_event
from desktop.store import log
from desktop.store.db import Store
from desktop.store.log import Event

_log = logging.getLogger("desk.session.bus")

# Runs inside a request's savepoint, before (guard) or after (commit) its events: a guard
# that raises refuses the request, a commit hook writes rows that must land atomically with
# the events (the inbox row of a prompt, the release of a claim).
Hook = Callable[[sqlite3.Connection], None]


@dataclass(frozen=True, slots=True)
class Draft:
    """An event to append. `data` is validated on construction through `draft`."""

    aggregate_id: str
    type: str
    data: dict[str, Any]
    id: str | None = None
    created: int | None = None
    version: int = 1


def draft(aggregate_id: str, type: str, data: object, **extra: Any) -> Draft:
    return Draft(aggregate_id, type, validate_event(type, data), **extra)


@dataclass(eq=False)
class _Request:
    drafts: list[Draft]
    guard: Hook | None
    commit: Hook | None
    future: asyncio.Future[list[Event]] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


def apply(
    conn: sqlite3.Connection,
    drafts: Iterable[Draft] | Iterable[Event],
    *,
    guard: Hook | None = None,
    commit: Hook | None = None,
) -> list[Event]:
    """Append and project, in the caller's transaction. `Event`s (a replay) keep their
    position, id, seq and time; `Draft`s get new ones."""
    if guard is not None:
        guard(conn)
    p = Projection(conn)
    seqs: dict[str, int] = {}
    out: list[Event] = []
    for d in drafts:
        if isinstance(d, Event):
            event = log.insert(
                conn,
                position=d.position,
                id=d.id,
                aggregate_id=d.aggregate_id,
                seq=d.seq,
                type=d.type,
                version=d.version,
                created=d.created,
                data=d.data,
            )
        else:
            seq = seqs.get(d.aggregate_id)
            if seq is None:
                seq = log.last_seq(conn, d.aggregate_id)
            seqs[d.aggregate_id] = seq = seq + 1
            event = log.insert(
                conn,
                id=d.id or new_id("evt"),
                aggregate_id=d.aggregate_id,
                seq=seq,
                type=d.type,
                version=d.version,
                created=d.created if d.created is not None else log.now_ms(),
                data=d.data,
            )
        project(p, event)
        out.append(event)
    p.flush()
    if commit is not None:
        commit(conn)
    return out


def frame(event: Event) -> bytes:
    return encode_event(event.type, event.to_json(), event.position)


class DurableBus:
    def __init__(self, store: Store, fanout: Fanout) -> None:
        self.store = store
        self.fanout = fanout
        self._pending: list[_Request] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.batches = 0
        # Called after each committed batch, on the loop, with the batch's events (in
        # position order) and the stored status of every session they touched (None: gone).
        self.listeners: list[Callable[[list[Event], dict[str, str | None]], None]] = []

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._writer(), name="desk-bus")

    async def stop(self) -> None:
        """Finish what is queued, then stop the writer."""
        task, self._task = self._task, None
        if task is None:
            return
        self._pending.append(_Request([], None, None))  # a marker so the loop wakes
        stop = self._pending[-1]
        self._wake.set()
        with contextlib.suppress(Exception):
            await stop.future
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def publish(
        self,
        drafts: Draft | list[Draft],
        *,
        guard: Hook | None = None,
        commit: Hook | None = None,
    ) -> list[Event]:
        """Append, project, commit, fan out; the appended events, or the projection's error."""
        if self._task is None:
            raise RuntimeError("the durable bus is not running")
        request = _Request(drafts if isinstance(drafts, list) else [drafts], guard, commit)
        self._pending.append(request)
        self._wake.set()
        return await request.future

    def broadcast(self, aggregate_id: str, type: str, data: object) -> None:
        """An ephemeral event: validated, fanned out, never stored."""
        clean = validate_event(type, data, durable=False)
        self.fanout.publish(type, {"session_id": aggregate_id, "data": clean})

    async def _writer(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            batch, self._pending = self._pending, []
            if not batch:
                continue
            try:
                results, statuses = await self.store.run(lambda b=batch: self._write(b))  # type: ignore[misc]
            except Exception as exc:  # the commit itself failed: nothing of the batch landed
                _log.exception("event batch of %d requests failed", len(batch))
                for request in batch:
                    if not request.future.done():
                        request.future.set_exception(exc)
                continue
            self.batches += 1
            committed: list[Event] = []
            for request, result in zip(batch, results, strict=True):
                if isinstance(result, BaseException):
                    if not request.future.done():
                        request.future.set_exception(result)
                    continue
                for event in result:
                    self.fanout.publish_frame(frame(event), event.position)
                committed.extend(result)
                if not request.future.done():
                    request.future.set_result(result)
            for listener in self.listeners:
                try:
                    listener(committed, statuses)
                except Exception:
                    _log.exception("event listener failed")

    def _write(
        self, batch: list[_Request]
    ) -> tuple[list[list[Event] | BaseException], dict[str, str | None]]:
        db = self.store.db
        conn = self.store.connection()
        results: list[list[Event] | BaseException] = []
        with db.atomic():
            for request in batch:
                try:
                    with db.atomic():
                        results.append(
                            apply(conn, request.drafts, guard=request.guard, commit=request.commit)
                        )
                except ProjectionError as exc:
                    results.append(exc.error)
                except SessionError as exc:
                    results.append(exc)
                except sqlite3.IntegrityError as exc:
                    results.append(
                        SessionError(409, "event.conflict", f"The event conflicts: {exc}.")
                    )
            touched = {e.aggregate_id for r in results if isinstance(r, list) for e in r}
            statuses = {sid: _stored_status(conn, sid) for sid in touched}
        return results, statuses


def _stored_status(conn: sqlite3.Connection, session_id: str) -> str | None:
    row = conn.execute(
        "SELECT status, time_suspended FROM session WHERE id = ?", (session_id,)
    ).fetchone()
    if row is None:
        return None
    return "busy" if row[1] is not None else str(row[0])
