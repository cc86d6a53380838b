"""The projection: how each durable event changes sessions and messages, one handler per event
type over one transaction's view of the rows."""

from __future__ import annotations

import copy
import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from desktop.events import errors
from desktop.events.errors import ProjectionError, SessionError
from desktop.store.log import Event, delete_aggregate, dumps


@dataclass(slots=True)
class _Message:
    session_id: str
    seq: int
    type: str
    data: dict[str, Any]
    new: bool
    dirty: bool


@dataclass(slots=True)
class _Session:
    parent_id: str | None
    status: str
    claimed: bool


class Projection:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._messages: dict[str, _Message | None] = {}
        self._sessions: dict[str, _Session | None] = {}
        self._touched: dict[str, int] = {}
        self._status: dict[str, str] = {}

    # sessions ----------------------------------------------------------------------
    def session(self, session_id: str) -> _Session | None:
        if session_id not in self._sessions:
            row = self.conn.execute(
                "SELECT parent_id, status, time_suspended IS NOT NULL FROM session WHERE id = ?",
                (session_id,),
            ).fetchone()
            self._sessions[session_id] = (
                None if row is None else _Session(row[0], row[1], bool(row[2]))
            )
        return self._sessions[session_id]

    def require_session(self, session_id: str) -> _Session:
        found = self.session(session_id)
        if found is None:
            raise ProjectionError(errors.session_not_found(session_id))
        return found

    def touch(self, session_id: str, created: int) -> None:
        self._touched[session_id] = created

    def set_status(self, session_id: str, status: str) -> None:
        found = self.require_session(session_id)
        if found.status != status:
            found.status = status
            self._status[session_id] = status

    def derived_status(self, session_id: str) -> str | None:
        """The API's status (busy while claimed) as this projection left it."""
        found = self.session(session_id)
        if found is None:
            return None
        return "busy" if found.claimed else found.status

    # messages ----------------------------------------------------------------------
    def message(self, message_id: str) -> _Message | None:
        if message_id not in self._messages:
            row = self.conn.execute(
                "SELECT session_id, seq, type, data FROM message WHERE id = ?", (message_id,)
            ).fetchone()
            self._messages[message_id] = (
                None
                if row is None
                else _Message(row[0], row[1], row[2], json.loads(row[3]), False, False)
            )
        return self._messages[message_id]

    def add_message(self, event: Event, message_type: str, data: dict[str, Any]) -> None:
        # No read first: a stored message with this id makes the INSERT in `flush` fail.
        if self._messages.get(data["id"]) is not None:
            raise _message_exists(data["id"])
        self._messages[data["id"]] = _Message(
            event.aggregate_id, event.seq, message_type, data, True, True
        )

    def assistant(self, event: Event) -> dict[str, Any]:
        """The event's assistant message, ready to be edited (marked dirty)."""
        message_id = event.data["message_id"]
        found = self.message(message_id)
        if found is None or found.session_id != event.aggregate_id:
            raise ProjectionError(errors.message_not_found(event.aggregate_id, message_id))
        if found.type != "assistant":
            raise ProjectionError(errors.message_not_assistant(message_id))
        found.dirty = True
        return found.data

    def flush(self) -> None:
        inserts: list[tuple[str, str, int, str, str]] = []
        updates: list[tuple[str, str]] = []
        for message_id, m in self._messages.items():
            if m is None or not m.dirty:
                continue
            if m.new:
                inserts.append((message_id, m.session_id, m.seq, m.type, dumps(m.data)))
            else:
                updates.append((dumps(m.data), message_id))
        if inserts:
            try:
                self.conn.executemany(
                    "INSERT INTO message (id, session_id, seq, type, data) VALUES (?, ?, ?, ?, ?)",
                    inserts,
                )
            except sqlite3.IntegrityError:
                taken = [
                    r[0]
                    for r in inserts
                    if self.conn.execute("SELECT 1 FROM message WHERE id = ?", (r[0],)).fetchone()
                ]
                raise _message_exists(taken[0] if taken else inserts[0][0]) from None
        if updates:
            self.conn.executemany("UPDATE message SET data = ? WHERE id = ?", updates)
        for m in self._messages.values():
            if m is not None:
                m.new = m.dirty = False
        for session_id, status in self._status.items():
            self.conn.execute("UPDATE session SET status = ? WHERE id = ?", (status, session_id))
        self._status.clear()
        for session_id, created in self._touched.items():
            self.conn.execute(
                "UPDATE session SET updated = MAX(updated, ?) WHERE id = ?", (created, session_id)
            )
        self._touched.clear()

    def forget_sessions(self, session_ids: set[str]) -> None:
        for sid in session_ids:
            self._sessions[sid] = None
            self._touched.pop(sid, None)
            self._status.pop(sid, None)
        for mid, m in list(self._messages.items()):
            if m is not None and m.session_id in session_ids:
                self._messages[mid] = None


def _message_exists(message_id: str) -> ProjectionError:
    return ProjectionError(
        SessionError(409, "session.message_exists", f"Message {message_id!r} already exists.")
    )


Handler = Callable[[Projection, Event], None]


def _created(p: Projection, e: Event) -> None:
    if p.session(e.aggregate_id) is not None:
        raise ProjectionError(
            SessionError(409, "session.exists", f"Session {e.aggregate_id!r} already exists.")
        )
    parent = e.data.get("parent_id")
    if parent is not None:
        p.require_session(parent)
    p.conn.execute(
        "INSERT INTO session (id, parent_id, title, directory, status, created, updated, "
        "time_suspended, resume_attempts) VALUES (?, ?, ?, ?, 'idle', ?, ?, NULL, 0)",
        (e.aggregate_id, parent, e.data["title"], e.data["directory"], e.created, e.created),
    )
    p._sessions[e.aggregate_id] = _Session(parent, "idle", False)


def _updated(p: Projection, e: Event) -> None:
    p.require_session(e.aggregate_id)
    p.conn.execute("UPDATE session SET title = ? WHERE id = ?", (e.data["title"], e.aggregate_id))
    p.touch(e.aggregate_id, e.created)


def _deleted(p: Projection, e: Event) -> None:
    """Removes the session and its descendants with everything they own; the `session.deleted`
    event itself stays as the aggregate's tombstone, so a client resuming the stream learns
    of the deletion. On replay the session is already gone: nothing to do."""
    if p.session(e.aggregate_id) is None:
        return
    p.flush()
    rows = p.conn.execute(
        "WITH RECURSIVE tree(id) AS (SELECT ? UNION ALL "
        "SELECT s.id FROM session s JOIN tree ON s.parent_id = tree.id) SELECT id FROM tree",
        (e.aggregate_id,),
    ).fetchall()
    ids = {r[0] for r in rows}
    for sid in ids:
        delete_aggregate(p.conn, sid, e.position)
        _drop_permissions(p.conn, sid)
        _drop_checkpoints(p.conn, sid)
        _drop_prefix(p.conn, context_key(sid, ""))
    # Messages, inbox and descendants go with the row (ON DELETE CASCADE).
    p.conn.execute("DELETE FROM session WHERE id = ?", (e.aggregate_id,))
    p.forget_sessions(ids)


def _prompted(p: Projection, e: Event) -> None:
    p.require_session(e.aggregate_id)
    message = {
        "id": e.data["message_id"],
        "type": "user",
        "text": e.data["text"],
        "time": {"created": e.created},
    }
    if "from_session" in e.data:
        message["from_session"] = e.data["from_session"]
    if e.data.get("mode") == "steer":  # a queued prompt (the default) carries no mode
        message["mode"] = "steer"
    p.add_message(e, "user", message)
    p.conn.execute("DELETE FROM kv WHERE key = ?", (checkpoint_key("pending", e.aggregate_id),))
    p.touch(e.aggregate_id, e.created)


def _synthetic(p: Projection, e: Event) -> None:
    p.require_session(e.aggregate_id)
    message = {
        "id": e.data["message_id"],
        "type": "synthetic",
        "text": e.data["text"],
        "description": e.data["description"],
        "metadata": e.data["metadata"],
        "time": {"created": e.created},
    }
    p.add_message(e, "synthetic", message)
    p.touch(e.aggregate_id, e.created)


_STEP_RESULT = ("finish", "error", "tokens", "cost")


def _step_started(p: Projection, e: Event) -> None:
    p.require_session(e.aggregate_id)
    message_id = e.data["message_id"]
    if p.message(message_id) is None:
        message = {
            "id": message_id,
            "type": "assistant",
            "agent": e.data["agent"],
            "model": e.data["model"],
            "content": [],
            "time": {"created": e.created},
        }
        p.add_message(e, "assistant", message)
    else:
        # A restarted step (retry, resume): the message is live again.
        draft = p.assistant(e)
        draft["agent"] = e.data["agent"]
        draft["model"] = e.data["model"]
        for key in _STEP_RESULT:
            draft.pop(key, None)
        draft["time"].pop("streamed", None)
        draft["time"].pop("completed", None)
    p.set_status(e.aggregate_id, "idle")
    p.touch(e.aggregate_id, e.created)


def _step_streamed(p: Projection, e: Event) -> None:
    draft = p.assistant(e)
    draft["time"].setdefault("streamed", e.created)
    kind = e.data.get("part")
    if kind and "text" in e.data:
        # Text saved while its block still streams: it grows a partial part, which the
        # block's own event replaces (a crash leaves it, marked partial).
        content = draft["content"]
        last = content[-1] if content else None
        if last is None or last.get("type") != kind or not last.get("partial"):
            last = {"type": kind, "text": "", "partial": True}
            if kind == "reasoning":
                last["time"] = {"created": e.created}
            content.append(last)
        last["text"] += e.data["text"]


def _block(p: Projection, e: Event, kind: str) -> dict[str, Any] | None:
    """The message's partial part of this kind that a block's event completes, if any."""
    content = p.assistant(e)["content"]
    last = content[-1] if content else None
    if last is not None and last.get("type") == kind and last.get("partial"):
        del last["partial"]
        return cast(dict[str, Any], last)
    return None


def _step_ended(p: Projection, e: Event) -> None:
    draft = p.assistant(e)
    draft["time"]["completed"] = e.created
    draft["finish"] = e.data["finish"]
    for key in ("tokens", "cost", "checkpoint"):
        if key in e.data:
            draft[key] = e.data[key]
    if "context" in e.data:
        _kv_set(p.conn, context_key(e.aggregate_id, "last"), e.data["context"], e.created)
    p.set_status(e.aggregate_id, "idle")
    p.touch(e.aggregate_id, e.created)


def _step_failed(p: Projection, e: Event) -> None:
    draft = p.assistant(e)
    draft["time"]["completed"] = e.created
    draft["error"] = e.data["error"]
    p.set_status(e.aggregate_id, "error")
    p.touch(e.aggregate_id, e.created)


def _text(p: Projection, e: Event) -> None:
    part = _block(p, e, "text")
    if part is not None:
        part["text"] = e.data["text"]
        return
    p.assistant(e)["content"].append({"type": "text", "text": e.data["text"]})


def _reasoning(p: Projection, e: Event) -> None:
    part = _block(p, e, "reasoning")
    if part is not None:
        part["text"] = e.data["text"]
        return
    p.assistant(e)["content"].append(
        {"type": "reasoning", "text": e.data["text"], "time": {"created": e.created}}
    )


def _tool_part(p: Projection, e: Event, *, create: bool) -> dict[str, Any]:
    draft = p.assistant(e)
    call_id = e.data["call_id"]
    for part in draft["content"]:
        if part.get("type") == "tool" and part.get("id") == call_id:
            return part  # type: ignore[no-any-return]
    if not create:
        raise ProjectionError(
            SessionError(
                404, "session.tool_not_found", f"No tool call {call_id!r} in that message."
            )
        )
    part = {
        "type": "tool",
        "id": call_id,
        "name": e.data["name"],
        "state": {"status": "streaming", "input": ""},
        "time": {"created": e.created},
    }
    draft["content"].append(part)
    return part


def _tool_input_started(p: Projection, e: Event) -> None:
    _tool_part(p, e, create=True)


def _tool_called(p: Projection, e: Event) -> None:
    part = _tool_part(p, e, create=True)
    part["name"] = e.data["name"]
    part["state"] = {"status": "running", "input": e.data["input"]}
    part["time"]["ran"] = e.created
    if "executed" in e.data:
        part["executed"] = e.data["executed"]


def _tool_settled(p: Projection, e: Event, state: dict[str, Any]) -> None:
    part = _tool_part(p, e, create=False)
    state["input"] = part["state"].get("input", "")
    if "metadata" in e.data:
        state["metadata"] = e.data["metadata"]
    part["state"] = state
    part["time"]["completed"] = e.created


def _tool_success(p: Projection, e: Event) -> None:
    _tool_settled(p, e, {"status": "completed", "content": e.data["content"]})


def _tool_failed(p: Projection, e: Event) -> None:
    _tool_settled(p, e, {"status": "error", "error": e.data["error"]})


def _retry_scheduled(p: Projection, e: Event) -> None:
    # Only the log and the live stream carry it: the retried step restarts its message.
    p.require_session(e.aggregate_id)


def _content_updated(p: Projection, e: Event) -> None:
    # A copy: later events edit the message in memory, the event's data must stay as sent.
    draft = p.assistant(e)
    draft["content"] = copy.deepcopy(e.data["content"])
    draft["time"]["edited"] = e.created
    p.touch(e.aggregate_id, e.created)


def _release(p: Projection, session_id: str) -> None:
    p.require_session(session_id).claimed = False
    p.conn.execute(
        "UPDATE session SET time_suspended = NULL, resume_attempts = 0 WHERE id = ?", (session_id,)
    )


def _interrupted(p: Projection, e: Event) -> None:
    p.require_session(e.aggregate_id)
    # A user cancel ends the turn for good; a shutdown keeps the claim for restart recovery.
    if e.data["reason"] == "user":
        _release(p, e.aggregate_id)
    p.touch(e.aggregate_id, e.created)


def _resume_exhausted(p: Projection, e: Event) -> None:
    p.require_session(e.aggregate_id)
    _release(p, e.aggregate_id)
    p.set_status(e.aggregate_id, "error")
    p.touch(e.aggregate_id, e.created)


_INPUT = ("user", "synthetic")  # what waits in the inbox


def _input_delivered(p: Projection, e: Event) -> None:
    """The prompt (or a background notice) moves to where it was delivered: its seq
    becomes this event's."""
    p.require_session(e.aggregate_id)
    found = p.message(e.data["message_id"])
    if found is None:
        # Cancelled since the runner read it (session.input.cancelled): it reads again.
        raise ProjectionError(errors.input_gone(e.aggregate_id))
    if found.session_id != e.aggregate_id or found.type not in _INPUT:
        raise ProjectionError(errors.message_not_found(e.aggregate_id, e.data["message_id"]))
    if not found.new:
        p.conn.execute("UPDATE message SET seq = ? WHERE id = ?", (e.seq, e.data["message_id"]))
    found.seq = e.seq


def _input_cancelled(p: Projection, e: Event) -> None:
    """A waiting prompt withdrawn before delivery: its user message goes (the service took
    its inbox row in the same transaction)."""
    p.require_session(e.aggregate_id)
    found = p.message(e.data["message_id"])
    if found is None or found.session_id != e.aggregate_id or found.type != "user":
        raise ProjectionError(errors.message_not_found(e.aggregate_id, e.data["message_id"]))
    if not found.new:
        p.conn.execute("DELETE FROM message WHERE id = ?", (e.data["message_id"],))
    p._messages[e.data["message_id"]] = None
    p.touch(e.aggregate_id, e.created)


def permission_key(session_id: str, *rest: str) -> str:
    """Permission state lives in kv under `permission/<session>/...` (mode, ask/<call>,
    allow/<tool>); one owner for the key shapes."""
    return "/".join(("permission", session_id, *rest))


def _drop_permissions(conn: sqlite3.Connection, session_id: str) -> None:
    prefix = permission_key(session_id, "")
    conn.execute("DELETE FROM kv WHERE key >= ? AND key < ?", (prefix, prefix + "\U0010ffff"))


def context_key(session_id: str, *rest: str) -> str:
    """A session's context state lives in kv under `context/<session>/...` (window: its own
    window; last: the last request's use)."""
    return "/".join(("context", session_id, *rest))


def _session_model(p: Projection, e: Event) -> None:
    """The session's own model settings, in kv at `context/<session>/model` (dropped with
    the session's context state)."""
    p.require_session(e.aggregate_id)
    key = context_key(e.aggregate_id, "model")
    current = _kv_get(p.conn, key)
    value = dict(current) if isinstance(current, dict) else {}
    for name in ("model", "reasoning_effort"):
        if name in e.data:
            if e.data[name] is None:
                value.pop(name, None)
            else:
                value[name] = e.data[name]
    _kv_set(p.conn, key, value, e.created)


def _drop_prefix(conn: sqlite3.Connection, prefix: str) -> None:
    conn.execute("DELETE FROM kv WHERE key >= ? AND key < ?", (prefix, prefix + "\U0010ffff"))


def _compacted(p: Projection, e: Event) -> None:
    """A compaction shows as a synthetic message (description "compaction") at the point it
    happened; what it hides from the model is in its metadata."""
    p.require_session(e.aggregate_id)
    compaction = {
        "through": e.data.get("through"),
        "pruned": e.data["pruned"],
        "reason": e.data["reason"],
        "tokens": e.data["tokens"],
    }
    message = {
        "id": e.data["message_id"],
        "type": "synthetic",
        "text": e.data["summary"],
        "description": "compaction",
        "metadata": {"compaction": compaction},
        "time": {"created": e.created},
    }
    p.add_message(e, "synthetic", message)
    p.touch(e.aggregate_id, e.created)


def _context_window(p: Projection, e: Event) -> None:
    p.require_session(e.aggregate_id)
    key = context_key(e.aggregate_id, "window")
    if e.data["window"] is None:
        p.conn.execute("DELETE FROM kv WHERE key = ?", (key,))
    else:
        _kv_set(p.conn, key, e.data["window"], e.created)


def _kv_set(conn: sqlite3.Connection, key: str, value: object, now: int) -> None:
    conn.execute(
        "INSERT INTO kv (key, value, updated) VALUES (?, ?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated = excluded.updated",
        (key, dumps(value), now),
    )


def _permission_mode(p: Projection, e: Event) -> None:
    p.require_session(e.aggregate_id)
    _kv_set(p.conn, permission_key(e.aggregate_id, "mode"), e.data["mode"], e.created)


def _permission_asked(p: Projection, e: Event) -> None:
    _tool_part(p, e, create=False)
    value = {**e.data, "time": {"created": e.created}}
    _kv_set(p.conn, permission_key(e.aggregate_id, "ask", e.data["call_id"]), value, e.created)


def _permission_replied(p: Projection, e: Event) -> None:
    p.require_session(e.aggregate_id)
    key = permission_key(e.aggregate_id, "ask", e.data["call_id"])
    asked = _kv_get(p.conn, key)
    pattern = asked.get("pattern") if isinstance(asked, dict) else None
    if p.conn.execute("DELETE FROM kv WHERE key = ?", (key,)).rowcount != 1:
        raise ProjectionError(
            SessionError(
                404,
                "session.permission_not_found",
                f"No permission request for call {e.data['call_id']!r} is waiting.",
            )
        )
    if e.data["reply"] == "session" and isinstance(pattern, str):
        # The card showed the pattern it allows (permission rules' derive_pattern).
        allow = permission_key(e.aggregate_id, "patterns", e.data["tool"])
        known = _kv_get(p.conn, allow)
        patterns = [x for x in known if isinstance(x, str)] if isinstance(known, list) else []
        _kv_set(p.conn, allow, [*dict.fromkeys([*patterns, pattern])], e.created)
    elif e.data["reply"] == "session":
        allow = permission_key(e.aggregate_id, "allow", e.data["tool"])
        _kv_set(p.conn, allow, True, e.created)


def checkpoint_key(kind: str, session_id: str) -> str:
    """Checkpoint state in kv: `checkpoint.pending/<session>` (the reverts a prompt has
    not made final yet), `checkpoint.intent/<session>` (a revert being written),
    `checkpoint.forked_from/<session>`, `checkpoint.step/<session>` (the running step's
    start)."""
    return f"checkpoint.{kind}/{session_id}"


def _drop_checkpoints(conn: sqlite3.Connection, session_id: str) -> None:
    kinds = ("pending", "intent", "forked_from", "step")
    keys = [(checkpoint_key(k, session_id),) for k in kinds]
    conn.executemany("DELETE FROM kv WHERE key = ?", keys)


def _kv_get(conn: sqlite3.Connection, key: str) -> Any:
    row = conn.execute("SELECT value FROM kv WHERE key = ?", (key,)).fetchone()
    return None if row is None else json.loads(row[0])


def _fresh_messages(p: Projection, session_id: str) -> None:
    """Write the batch's edits, then forget the session's messages: SQL changes them next."""
    p.flush()
    for mid, m in list(p._messages.items()):
        if m is not None and m.session_id == session_id:
            del p._messages[mid]


def _reverted(p: Projection, e: Event) -> None:
    """Marks the message and every later one `reverted` (hidden from the model, shown to
    the person) and adds the revert to the pending ones, which an unrevert undoes."""
    sid = e.aggregate_id
    p.require_session(sid)
    target = p.message(e.data["message_id"])
    if target is None or target.session_id != sid:
        raise ProjectionError(errors.message_not_found(sid, e.data["message_id"]))
    if target.type != "user":
        raise ProjectionError(errors.message_not_user(e.data["message_id"]))
    _fresh_messages(p, sid)
    rows = p.conn.execute(
        "SELECT id FROM message WHERE session_id = ? AND seq >= ? "
        "AND json_extract(data, '$.reverted') IS NULL ORDER BY seq",
        (sid, target.seq),
    ).fetchall()
    hidden = [r[0] for r in rows]
    p.conn.executemany(
        "UPDATE message SET data = json_set(data, '$.reverted', json('true')) WHERE id = ?",
        [(mid,) for mid in hidden],
    )
    key = checkpoint_key("pending", sid)
    pending = _kv_get(p.conn, key) or []
    revert = {k: e.data[k] for k in ("message_id", "before", "after", "restored")}
    _kv_set(p.conn, key, [*pending, {**revert, "hidden": hidden}], e.created)
    p.touch(sid, e.created)


def _unreverted(p: Projection, e: Event) -> None:
    sid = e.aggregate_id
    p.require_session(sid)
    key = checkpoint_key("pending", sid)
    pending = _kv_get(p.conn, key)
    if not pending:
        raise ProjectionError(errors.nothing_to_unrevert(sid))
    _fresh_messages(p, sid)
    p.conn.executemany(
        "UPDATE message SET data = json_remove(data, '$.reverted') WHERE id = ?",
        [(mid,) for revert in pending for mid in revert["hidden"]],
    )
    p.conn.execute("DELETE FROM kv WHERE key = ?", (key,))
    p.touch(sid, e.created)


def _forked(p: Projection, e: Event) -> None:
    p.require_session(e.aggregate_id)
    origin = {"session_id": e.data["session_id"], "message_id": e.data["message_id"]}
    _kv_set(p.conn, checkpoint_key("forked_from", e.aggregate_id), origin, e.created)


def _message_copied(p: Projection, e: Event) -> None:
    p.require_session(e.aggregate_id)
    message = {k: v for k, v in e.data["message"].items() if k != "reverted"}
    p.add_message(e, message["type"], copy.deepcopy(message))
    p.touch(e.aggregate_id, e.created)


HANDLERS: dict[str, Handler] = {
    "session.created": _created,
    "session.updated": _updated,
    "session.deleted": _deleted,
    "session.prompted": _prompted,
    "session.synthetic": _synthetic,
    "session.step.started": _step_started,
    "session.step.streamed": _step_streamed,
    "session.step.ended": _step_ended,
    "session.step.failed": _step_failed,
    "session.text": _text,
    "session.reasoning": _reasoning,
    "session.tool.input.started": _tool_input_started,
    "session.tool.called": _tool_called,
    "session.tool.success": _tool_success,
    "session.tool.failed": _tool_failed,
    "session.retry.scheduled": _retry_scheduled,
    "session.message.content.updated": _content_updated,
    "session.execution.interrupted": _interrupted,
    "session.resume.exhausted": _resume_exhausted,
    "session.input.delivered": _input_delivered,
    "session.input.cancelled": _input_cancelled,
    "session.compacted": _compacted,
    "session.context.window": _context_window,
    "session.model": _session_model,
    "session.permission.mode": _permission_mode,
    "session.permission.asked": _permission_asked,
    "session.permission.replied": _permission_replied,
    "session.reverted": _reverted,
    "session.unreverted": _unreverted,
    "session.forked": _forked,
    "session.message.copied": _message_copied,
}


def project(p: Projection, event: Event) -> None:
    HANDLERS[event.type](p, event)
