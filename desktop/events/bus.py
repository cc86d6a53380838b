"""The durable bus: publishing appends events and applies their projection in one
transaction on the store thread, then fans them out; ephemeral events are only fanned out.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sqlite3
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from desktop.events.errors import ProjectionError, SessionError
from desktop.events.fanout import Fanout, encode_event
from desktop.events.ids import new_id
from desktop.events.projector import Projection, project
from desktop.events.schema import validate_event
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


def draft(aggregate_id: str, event_type: str, data: object, **extra: Any) -> Draft:
    return Draft(aggregate_id, event_type, validate_event(event_type, data), **extra)


@dataclass(eq=False)
class _Request:
    drafts: list[Draft]
    guard: Hook | None
    commit: Hook | None
    future: asyncio.Future[list[Event]] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class LogState:
    """The writer's memory of the log's head position and of each aggregate's last seq, so
    an append reads nothing first. Valid because the store thread is the only writer; it
    is reloaded lazily, and dropped whenever a transaction fails."""

    def __init__(self) -> None:
        self.head: int | None = None
        self.seqs: dict[str, int] = {}

    def reset(self) -> None:
        self.head = None
        self.seqs.clear()

    def advance(self, events: list[Event]) -> None:
        for e in events:
            self.seqs[e.aggregate_id] = e.seq
        if events:
            self.head = events[-1].position


@dataclass(frozen=True, slots=True)
class Applied:
    events: list[Event]
    # Derived status of every session the events touched (None: it no longer exists).
    statuses: dict[str, str | None]


_Written = tuple[list[list[Event] | BaseException], dict[str, str | None]]


def apply(
    conn: sqlite3.Connection,
    drafts: Iterable[Draft] | Iterable[Event],
    *,
    guard: Hook | None = None,
    commit: Hook | None = None,
    state: LogState | None = None,
) -> list[Event]:
    return apply_full(conn, drafts, guard=guard, commit=commit, state=state).events


def apply_full(
    conn: sqlite3.Connection,
    drafts: Iterable[Draft] | Iterable[Event],
    *,
    guard: Hook | None = None,
    commit: Hook | None = None,
    state: LogState | None = None,
) -> Applied:
    """Append and project, in the caller's transaction. `Event`s (a replay) keep their
    position, id, seq and time; `Draft`s get new ones. Rows are inserted in one statement
    per request (before a deletion, which must see its session's events)."""
    if guard is not None:
        guard(conn)
    p = Projection(conn)
    known = state or LogState()
    head = known.head if known.head is not None else log.head(conn)
    seqs: dict[str, int] = {}
    out: list[Event] = []
    unwritten: list[Event] = []
    for d in drafts:
        if isinstance(d, Event):
            event = d
        else:
            seq = seqs.get(d.aggregate_id) or known.seqs.get(d.aggregate_id)
            if seq is None:
                seq = log.last_seq(conn, d.aggregate_id)
            seqs[d.aggregate_id] = seq = seq + 1
            head += 1
            event = Event(
                head,
                d.id or new_id("evt"),
                d.aggregate_id,
                seq,
                d.type,
                d.version,
                d.created if d.created is not None else log.now_ms(),
                d.data,
                log.dumps(d.data),  # encoded once: for the row and for the SSE frame
            )
        unwritten.append(event)
        if event.type == "session.deleted":
            log.insert_many(conn, unwritten)
            unwritten = []
        project(p, event)
        out.append(event)
    log.insert_many(conn, unwritten)
    p.flush()
    touched = {e.aggregate_id for e in out}
    if commit is not None:
        commit(conn)
        statuses = {sid: stored_status(conn, sid) for sid in touched}
    else:
        statuses = {sid: p.derived_status(sid) for sid in touched}
    return Applied(out, statuses)


REPLAY_CHUNK = 5000


def replay(store: Store, events: list[Event], chunk: int = REPLAY_CHUNK) -> None:
    """Rebuild the projection from a log into an empty store (run on its thread): the events
    keep their positions, ids, seqs and times, and their stored JSON is written back as it
    was. One transaction per `chunk` events."""
    conn = store.connection()
    for start in range(0, len(events), chunk):
        with store.db.atomic():
            apply(conn, events[start : start + chunk])


def frame(event: Event) -> bytes:
    """The SSE frame of a durable event, `{"type", "properties": event.to_json()}`; the
    data's JSON is spliced in as stored rather than encoded again."""
    if event.raw is None:
        return encode_event(event.type, event.to_json(), event.position)
    envelope = event.to_json()
    del envelope["data"]
    head = _ENCODE(envelope)[:-1]
    kind = _ENCODE(event.type)
    payload = f'{{"type":{kind},"properties":{head},"data":{event.raw}}}}}'
    return f"id: {event.position}\ndata: {payload}\n\n".encode()


_ENCODE = json.JSONEncoder(separators=(",", ":")).encode


class DurableBus:
    """Publish requests queue on the loop; one batch at a time is written on the store thread.
    While a batch is being written, new requests wait, and the next batch takes all of them:
    one transaction (one commit) per batch, one savepoint per request, so a request whose
    projection fails is rolled back alone and its caller gets the error while the rest of the
    batch commits. The event loop never waits on SQLite and no transaction ever spans an
    `await`: each batch is one function submitted to the store thread. Fan-out happens after
    the commit, in position order.
    """

    def __init__(self, store: Store, fanout: Fanout) -> None:
        self.store = store
        self.fanout = fanout
        self._pending: list[_Request] = []
        self._in_flight = False
        self._running = False
        self._idle = asyncio.Event()
        self._idle.set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._state = LogState()
        self.batches = 0
        # Called after each committed batch, on the loop, with the batch's events (in
        # position order) and the status of every session they touched (None: gone).
        self.listeners: list[Callable[[list[Event], dict[str, str | None]], None]] = []

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._running = True

    async def stop(self) -> None:
        """Refuse new requests, let the queued ones commit."""
        self._running = False
        await self._idle.wait()

    async def publish(
        self,
        drafts: Draft | list[Draft],
        *,
        guard: Hook | None = None,
        commit: Hook | None = None,
    ) -> list[Event]:
        """Append, project, commit, fan out; the appended events, or the projection's error."""
        if not self._running:
            raise RuntimeError("the durable bus is not running")
        request = _Request(drafts if isinstance(drafts, list) else [drafts], guard, commit)
        self._pending.append(request)
        if not self._in_flight:
            self._flush()
        return await request.future

    def broadcast(self, aggregate_id: str, event_type: str, data: object) -> None:
        """An ephemeral event: validated, fanned out, never stored."""
        clean = validate_event(event_type, data, durable=False)
        self.fanout.publish(event_type, {"session_id": aggregate_id, "data": clean})

    def _flush(self) -> None:
        # One batch at a time: what queues meanwhile is the next batch. The store thread
        # hands the result straight back to the loop (no task in between: one hop each way).
        batch, self._pending = self._pending, []
        self._in_flight = True
        self._idle.clear()
        loop = self._loop
        assert loop is not None
        done = self.store.submit(lambda: self._write(batch))
        done.add_done_callback(lambda f: loop.call_soon_threadsafe(self._finish, batch, f))

    def _finish(self, batch: list[_Request], done: Future[_Written]) -> None:
        self._in_flight = False
        if self._pending:
            self._flush()  # keep the store thread busy while this batch is fanned out
        else:
            self._idle.set()
        error = done.exception()
        if error is not None:  # the commit itself failed: nothing of the batch landed
            _log.error("event batch of %d requests failed: %r", len(batch), error)
            for request in batch:
                if not request.future.done():
                    request.future.set_exception(error)
            return
        results, statuses = done.result()
        self.batches += 1
        committed: list[Event] = []
        for request, result in zip(batch, results, strict=True):
            if isinstance(result, BaseException):
                if not request.future.done():
                    request.future.set_exception(result)
                continue
            if self.fanout.subscriber_count:  # nobody listens: nothing to encode
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

    def _write(self, batch: list[_Request]) -> _Written:
        db = self.store.db
        conn = self.store.connection()
        results: list[list[Event] | BaseException] = []
        statuses: dict[str, str | None] = {}
        # A lone request needs no savepoint: if it fails, the whole transaction goes.
        scope = contextlib.nullcontext if len(batch) == 1 else db.atomic
        try:
            with db.atomic() as transaction:
                for request in batch:
                    try:
                        with scope():
                            applied = apply_full(
                                conn,
                                request.drafts,
                                guard=request.guard,
                                commit=request.commit,
                                state=self._state,
                            )
                    except Exception as exc:
                        # Refused (or a projection bug): this request's writes go, the rest
                        # of the batch still commits.
                        if len(batch) == 1:
                            transaction.rollback()
                        if isinstance(exc, sqlite3.IntegrityError):
                            self._state.reset()
                        results.append(_refusal(exc))
                        continue
                    self._state.advance(applied.events)
                    statuses.update(applied.statuses)
                    results.append(applied.events)
        except BaseException:
            self._state.reset()
            raise
        return results, statuses


def _refusal(exc: Exception) -> Exception:
    if isinstance(exc, ProjectionError):
        return exc.error
    if isinstance(exc, SessionError):
        return exc
    if isinstance(exc, sqlite3.IntegrityError):
        return SessionError(409, "event.conflict", f"The event conflicts: {exc}.")
    _log.error("projection failed; its events were rolled back", exc_info=exc)
    return exc


def stored_status(conn: sqlite3.Connection, session_id: str) -> str | None:
    row = conn.execute(
        "SELECT status, time_suspended FROM session WHERE id = ?", (session_id,)
    ).fetchone()
    if row is None:
        return None
    return "busy" if row[1] is not None else str(row[0])
