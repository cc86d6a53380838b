"""What a step reads: the session's delivered history and its waiting input, one snapshot."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from desktop.store import sessions as q


@dataclass(frozen=True)
class Snapshot:
    directory: str
    title: str
    parent_id: str | None
    messages: list[dict[str, Any]]  # delivered history, in order
    inbox: list[dict[str, Any]]  # waiting input rows (id = its user message id), oldest first
    waiting: dict[str, dict[str, Any]]  # the user messages of those rows, by id


def read(conn: sqlite3.Connection, session_id: str) -> Snapshot | None:
    """None when the session is gone.

    A prompt is projected as a user message the moment it is recorded (the UI shows it at
    once), but the model sees it only once the runner delivers it (`session.input.delivered`
    moves it to the point of delivery and takes its inbox row). Until then it is left out of
    the history, so input queued during a turn cannot slip in between that turn's steps.
    """
    session = q.get_session(conn, session_id)
    if session is None:
        return None
    inbox = q.inbox_pending(conn, session_id)
    waiting = {row["id"] for row in inbox}
    every = q.all_messages(conn, session_id)
    messages = [m for m in every if m["id"] not in waiting]
    return Snapshot(
        str(session["directory"]),
        str(session["title"]),
        session["parent_id"] if isinstance(session["parent_id"], str) else None,
        messages,
        inbox,
        {m["id"]: m for m in every if m["id"] in waiting},
    )


def open_tool_parts(messages: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(message id, part) of every tool part still `streaming` or `running`."""
    found: list[tuple[str, dict[str, Any]]] = []
    for message in messages:
        if message.get("type") != "assistant":
            continue
        for part in message.get("content", []):
            if part.get("type") == "tool" and part["state"]["status"] in ("streaming", "running"):
                found.append((message["id"], part))
    return found


def last_assistant_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("type") != "assistant":
            continue
        texts = [p["text"] for p in message.get("content", []) if p.get("type") == "text"]
        if texts:
            return "".join(texts)
    return ""
