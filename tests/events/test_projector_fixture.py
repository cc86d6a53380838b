"""The page's mirror of the projection (web/src/chat/apply.js) agrees with it: a session's life
through the real bus and projector, written as web/test/fixtures/projector.json (its events
as the stream carries them, the messages and session they leave), which vitest replays
through the page's chat store. DESK_WRITE_FIXTURES=1 rewrites the fixture."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from desktop.events.bus import draft
from desktop.events.errors import SessionError
from desktop.store import sessions as q
from tests.support.sessions import MODEL, open_here, publish_here, whole_log

FIXTURE = Path(__file__).resolve().parents[2] / "web" / "test" / "fixtures" / "projector.json"
SID = "ses_fixture"
T0 = 1_767_225_600_000  # every event's time is fixed, so the fixture is the same on every run

Step = tuple[str, dict[str, Any]]


def life() -> list[Step]:
    """Every event type that changes a message or a session's status or time, including a
    prompt queued behind a running turn, one cancelled before delivery, one steered into the
    turn, a subagent's task
    (from_session), a step restart, a content edit and a compaction."""
    a1, a2, a3 = "msg_a1", "msg_a2", "msg_a3"
    return [
        ("session.created", {"title": "Fixture", "directory": "/tmp/fixture"}),
        ("session.updated", {"title": "Fixture, renamed"}),
        (
            "session.prompted",
            {"message_id": "msg_u1", "text": "hello", "mode": "queue", "from_session": "ses_p"},
        ),
        ("session.input.delivered", {"message_id": "msg_u1"}),
        ("session.step.started", {"message_id": a1, "agent": "build", "model": MODEL}),
        ("session.reasoning", {"message_id": a1, "text": "thinking"}),
        ("session.step.streamed", {"message_id": a1}),
        ("session.text", {"message_id": a1, "text": "Reading it."}),
        ("session.tool.input.started", {"message_id": a1, "call_id": "c1", "name": "read"}),
        (
            "session.tool.called",
            {"message_id": a1, "call_id": "c1", "name": "read", "input": {"path": "a.txt"}},
        ),
        ("session.prompted", {"message_id": "msg_u2", "text": "and then?", "mode": "queue"}),
        ("session.prompted", {"message_id": "msg_u3", "text": "never mind", "mode": "queue"}),
        ("session.input.cancelled", {"message_id": "msg_u3"}),
        ("session.prompted", {"message_id": "msg_u4", "text": "use b.txt", "mode": "steer"}),
        (
            "session.tool.success",
            {"message_id": a1, "call_id": "c1", "content": "1: a", "metadata": {"lines": 1}},
        ),
        ("session.permission.mode", {"mode": "ask"}),
        (
            "session.tool.called",
            {
                "message_id": a1,
                "call_id": "c2",
                "name": "shell",
                "input": {"command": "make"},
                "executed": False,
            },
        ),
        (
            "session.permission.asked",
            {"message_id": a1, "call_id": "c2", "tool": "shell", "input": {"command": "make"}},
        ),
        (
            "session.permission.replied",
            {"message_id": a1, "call_id": "c2", "tool": "shell", "reply": "deny"},
        ),
        (
            "session.tool.failed",
            {
                "message_id": a1,
                "call_id": "c2",
                "error": {"type": "rejected", "message": "The person said no."},
                "metadata": {"asked": True},
            },
        ),
        ("session.input.delivered", {"message_id": "msg_u4"}),
        (
            "session.retry.scheduled",
            {
                "message_id": a1,
                "attempt": 1,
                "at": T0 + 99,
                "error": {"type": "rate", "message": "429"},
            },
        ),
        ("session.step.started", {"message_id": a1, "agent": "build", "model": MODEL}),
        ("session.step.streamed", {"message_id": a1}),
        ("session.step.streamed", {"message_id": a1, "part": "reasoning", "text": "Hm"}),
        ("session.reasoning", {"message_id": a1, "text": "Hmm."}),
        ("session.step.streamed", {"message_id": a1, "part": "text", "text": "Do"}),
        ("session.step.streamed", {"message_id": a1, "part": "text", "text": "ne"}),
        ("session.text", {"message_id": a1, "text": "Done."}),
        (
            "session.step.ended",
            {
                "message_id": a1,
                "finish": "stop",
                "tokens": {"input": 10, "output": 5},
                "cost": 0.25,
            },
        ),
        ("session.input.delivered", {"message_id": "msg_u2"}),
        (
            "session.synthetic",
            {
                "message_id": "msg_s",
                "text": "<job done>",
                "description": "job",
                "metadata": {"job": "j1"},
            },
        ),
        ("session.input.delivered", {"message_id": "msg_s"}),
        ("session.step.started", {"message_id": a2, "agent": "plan", "model": MODEL}),
        ("session.text", {"message_id": a2, "text": "Then this."}),
        ("session.step.ended", {"message_id": a2, "finish": "stop"}),
        (
            "session.message.content.updated",
            {"message_id": a2, "content": [{"type": "text", "text": "Edited."}]},
        ),
        (
            "session.compacted",
            {
                "message_id": "msg_c",
                "summary": "We read a.txt.",
                "through": a1,
                "pruned": ["c1"],
                "reason": "manual",
                "tokens": {"before": 900, "after": 100},
            },
        ),
        ("session.context.window", {"window": 64000}),
        ("session.step.started", {"message_id": a3, "agent": "build", "model": MODEL}),
        ("session.step.streamed", {"message_id": a3, "part": "text", "text": "Half an"}),
        ("session.step.failed", {"message_id": a3, "error": {"type": "x", "message": "boom"}}),
        ("session.execution.interrupted", {"reason": "shutdown"}),
        ("session.execution.interrupted", {"reason": "user"}),
        ("session.resume.exhausted", {"error": {"type": "resume", "message": "budget"}}),
    ]


def projected(tmp_path: Path) -> dict[str, Any]:
    """The life published through the bus, and what the projector made of it."""
    store = open_here(tmp_path / "desk.sqlite3")
    drafts = [
        draft(SID, kind, data, id=f"evt_{n:03d}", created=T0 + 1000 * n)
        for n, (kind, data) in enumerate(life(), start=1)
    ]
    result = publish_here(store, drafts)
    assert not isinstance(result, SessionError), result
    conn = store.connection()
    return {
        "events": [event.to_json() for event in whole_log(conn)],
        "messages": q.all_messages(conn, SID),
        "session": q.get_session(conn, SID),
    }


def test_the_page_fixture_is_what_the_projector_makes_of_its_events(tmp_path: Path) -> None:
    made = projected(tmp_path)
    if os.environ.get("DESK_WRITE_FIXTURES") == "1":
        FIXTURE.parent.mkdir(parents=True, exist_ok=True)
        FIXTURE.write_text(json.dumps(made, indent=2, ensure_ascii=False) + "\n")
    stored = json.loads(FIXTURE.read_text())
    assert stored == made, f"{FIXTURE} is stale: rewrite it with DESK_WRITE_FIXTURES=1"


def test_the_fixture_ends_with_messages_of_every_kind_in_delivery_order(tmp_path: Path) -> None:
    made = projected(tmp_path)
    ids = [m["id"] for m in made["messages"]]
    # The prompts sent during the first turn follow it, where the model received them.
    assert ids == ["msg_u1", "msg_a1", "msg_u4", "msg_u2", "msg_s", "msg_a2", "msg_c", "msg_a3"]
    modes = {m["id"]: m.get("mode") for m in made["messages"] if m["type"] == "user"}
    assert modes == {"msg_u1": None, "msg_u4": "steer", "msg_u2": None}
    assert made["session"]["status"] == "error"
