"""Shared helpers for session tests: event builders covering every durable type, a store
opened on the calling thread, publishing with the bus's transaction rules, replay, and the
count of job records in a database file."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from typing import Any

from desktop.events.bus import Draft, apply, draft, replay
from desktop.events.errors import ProjectionError, SessionError
from desktop.store import log
from desktop.store.db import Store
from desktop.store.log import Event

MODEL = {"id": "model-1", "provider_id": "provider-1"}


def started(mid: str, agent: str = "build") -> tuple[str, dict[str, Any]]:
    return "session.step.started", {"message_id": mid, "agent": agent, "model": MODEL}


def ended(mid: str, finish: str = "stop") -> tuple[str, dict[str, Any]]:
    return "session.step.ended", {
        "message_id": mid,
        "finish": finish,
        "tokens": {"input": 1, "output": 2},
        "cost": 0.5,
    }


def every_event(mid: str = "msg_a", other: str = "msg_b") -> list[tuple[str, dict[str, Any]]]:
    """A session's life that uses every durable event type but created/deleted (which the
    caller wraps around it), including a step restart and a content replacement."""
    return [
        ("session.updated", {"title": "renamed"}),
        ("session.prompted", {"message_id": "msg_u", "text": "hello", "mode": "queue"}),
        ("session.input.delivered", {"message_id": "msg_u"}),
        ("session.prompted", {"message_id": "msg_q", "text": "oops", "mode": "queue"}),
        ("session.input.cancelled", {"message_id": "msg_q"}),
        ("session.synthetic", {"message_id": "msg_s", "text": "<shell>", "description": "job"}),
        started(mid),
        ("session.reasoning", {"message_id": mid, "text": "thinking"}),
        ("session.step.streamed", {"message_id": mid}),
        ("session.text", {"message_id": mid, "text": "answer"}),
        ("session.tool.input.started", {"message_id": mid, "call_id": "c1", "name": "read"}),
        ("session.tool.called", {"message_id": mid, "call_id": "c1", "name": "read", "input": {}}),
        ("session.tool.success", {"message_id": mid, "call_id": "c1", "content": "ok"}),
        ("session.permission.mode", {"mode": "ask"}),
        (
            "session.tool.called",
            {"message_id": mid, "call_id": "c2", "name": "shell", "input": {"command": "x"}},
        ),
        (
            "session.permission.asked",
            {"message_id": mid, "call_id": "c2", "tool": "shell", "input": {"command": "x"}},
        ),
        (
            "session.permission.replied",
            {"message_id": mid, "call_id": "c2", "tool": "shell", "reply": "session"},
        ),
        (
            "session.tool.failed",
            {"message_id": mid, "call_id": "c2", "error": {"type": "t", "message": "no"}},
        ),
        (
            "session.retry.scheduled",
            {"message_id": mid, "attempt": 1, "at": 5, "error": {"type": "rate", "message": "429"}},
        ),
        started(mid),  # the step restarts: streamed/completed cleared
        ("session.step.streamed", {"message_id": mid}),
        ended(mid),
        ("session.step.ended", {"message_id": mid, "finish": "stop", "context": {"used": 9}}),
        ("session.context.window", {"window": 8192}),
        ("session.model", {"model": "other-model", "reasoning_effort": "low"}),
        (
            "session.message.content.updated",
            {"message_id": mid, "content": [{"type": "text", "text": "edited"}]},
        ),
        started(other),
        ("session.step.failed", {"message_id": other, "error": {"type": "x", "message": "boom"}}),
        ("session.execution.interrupted", {"reason": "shutdown"}),
        ("session.execution.interrupted", {"reason": "user"}),
        ("session.resume.exhausted", {"error": {"type": "resume", "message": "budget"}}),
        (
            "session.compacted",
            {
                "message_id": "msg_c",
                "summary": "Goal: test",
                "through": "msg_u",
                "pruned": ["c1"],
                "reason": "threshold",
                "tokens": {"before": 90, "after": 30},
            },
        ),
    ]


TREE_A, TREE_B = "a" * 40, "b" * 40


def checkpoint_events(mid: str) -> list[tuple[str, dict[str, Any]]]:
    """A step's checkpoint, a revert to the prompt, its undoing, a fork's copy."""
    files = [{"path": "x.txt", "status": "added", "additions": 1, "deletions": 0}]
    moved = {"before": TREE_B, "after": TREE_A, "restored": ["x.txt"], "conflicts": []}
    copied = {"id": "msg_copy", "type": "user", "text": "hello", "time": {"created": 1}}
    return [
        (
            "session.step.ended",
            {
                "message_id": mid,
                "finish": "stop",
                "checkpoint": {"start": TREE_A, "end": TREE_B, "files": files},
            },
        ),
        ("session.reverted", {"message_id": "msg_u", **moved}),
        ("session.unreverted", moved),
        ("session.forked", {"session_id": "ses_x", "message_id": None}),
        ("session.message.copied", {"message": copied}),
    ]


def open_here(path: Path) -> Store:
    """A store used from the calling thread (sync tests; not how the service uses it)."""
    store = Store(path)
    store._open()
    return store


def publish_here(store: Store, drafts: list[Draft]) -> list[Event] | SessionError:
    """One bus request, with the bus's rules: all or nothing."""
    db = store.db
    try:
        with db.atomic():
            return apply(store.connection(), drafts)
    except ProjectionError as exc:
        return exc.error


def create_here(store: Store, session_id: str, directory: str = "/tmp") -> None:
    result = publish_here(
        store, [draft(session_id, "session.created", {"title": "t", "directory": directory})]
    )
    assert not isinstance(result, SessionError), result


def whole_log(conn: sqlite3.Connection) -> list[Event]:
    return log.after(conn, 0, 10**9)


def replay_here(store: Store, events: list[Event]) -> None:
    replay(store, events)


def projection(conn: sqlite3.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Every projected row that a replay must reproduce."""
    return {
        "message": conn.execute(
            "SELECT id, session_id, seq, type, data FROM message ORDER BY session_id, seq"
        ).fetchall(),
        "session": conn.execute(
            "SELECT id, parent_id, title, directory, status, created, updated FROM session "
            "ORDER BY id"
        ).fetchall(),
        "kv": conn.execute("SELECT key, value FROM kv ORDER BY key").fetchall(),
        "event": conn.execute(
            "SELECT position, id, aggregate_id, seq, type, version, created, data FROM event "
            "ORDER BY position"
        ).fetchall(),
    }


async def publish_app(
    app: Any, session_id: str, *events: tuple[str, dict[str, Any]]
) -> list[Event]:
    """Publish through a running app's real bus (in-process route tests)."""
    from desktop.server.appkeys import ENGINE

    service = app[ENGINE].sessions
    return await service.publish([draft(session_id, kind, data) for kind, data in events])  # type: ignore[no-any-return]


async def table_counts(app: Any) -> dict[str, int]:
    """Rows per table, read on the store thread: proves a refused request wrote nothing."""
    from desktop.server.appkeys import STORE

    store = app[STORE]

    def read() -> dict[str, int]:
        c = store.connection()
        return {
            t: int(c.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0])
            for t in ("session", "event", "message", "inbox", "kv", "job")
        }

    return await store.run(read)  # type: ignore[no-any-return]


def recorded_jobs(database: Path) -> int:
    """Ended jobs' rows (desktop/jobs/model.py) in a real database file."""
    with contextlib.closing(sqlite3.connect(database)) as db:
        (count,) = db.execute("SELECT count(*) FROM job WHERE completed IS NOT NULL").fetchone()
    return int(count)
