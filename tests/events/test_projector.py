"""The projection of every durable event type, and its transaction rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from desktop.events.bus import draft
from desktop.events.errors import SessionError
from desktop.events.projector import HANDLERS
from desktop.events.schema import DURABLE
from desktop.store import sessions as q
from desktop.store.db import Store
from tests.support.sessions import (
    create_here,
    ended,
    every_event,
    open_here,
    publish_here,
    started,
)

SID = "ses_projector"


@pytest.fixture
def store(tmp_path: Path) -> Store:
    store = open_here(tmp_path / "desk.sqlite3")
    create_here(store, SID)
    return store


def publish(store: Store, *events: tuple[str, dict[str, Any]], sid: str = SID) -> object:
    return publish_here(store, [draft(sid, kind, data) for kind, data in events])


def messages(store: Store, sid: str = SID) -> list[dict[str, Any]]:
    return q.all_messages(store.connection(), sid)


def event_count(store: Store) -> int:
    return int(store.connection().execute("SELECT COUNT(*) FROM event").fetchone()[0])


def test_every_durable_event_type_has_a_projection_handler() -> None:
    assert set(HANDLERS) == set(DURABLE)


def test_a_whole_session_life_projects_to_the_api_message_shapes(store: Store) -> None:
    result = publish(store, *every_event())
    assert not isinstance(result, SessionError), result
    user, synthetic, assistant, failed, compaction = messages(store)
    assert compaction["description"] == "compaction"
    assert compaction["metadata"]["compaction"]["through"] == "msg_u"
    assert user == {"id": "msg_u", "type": "user", "text": "hello", "time": user["time"]}
    assert synthetic["type"] == "synthetic"
    assert synthetic["description"] == "job"
    assert synthetic["metadata"] == {}
    assert assistant["type"] == "assistant"
    assert assistant["content"] == [{"type": "text", "text": "edited"}]
    assert assistant["finish"] == "stop"
    assert assistant["cost"] == 0.5
    assert assistant["model"] == {"id": "model-1", "provider_id": "provider-1"}
    times = assistant["time"]
    assert isinstance(times, dict)
    assert {"created", "streamed", "completed"} <= set(times)
    assert failed["error"] == {"type": "x", "message": "boom"}
    session = q.get_session(store.connection(), SID)
    assert session is not None
    assert session["title"] == "renamed"
    assert session["status"] == "error"


def test_tool_parts_go_streaming_running_completed_or_error(store: Store) -> None:
    mid = "msg_t"
    publish(store, started(mid))
    publish(
        store, ("session.tool.input.started", {"message_id": mid, "call_id": "c", "name": "read"})
    )
    [m] = messages(store)
    part = m["content"][0]
    assert part["state"] == {"status": "streaming", "input": ""}
    publish(
        store,
        (
            "session.tool.called",
            {"message_id": mid, "call_id": "c", "name": "read", "input": {"path": "a"}},
        ),
    )
    part = messages(store)[0]["content"][0]
    assert part["state"] == {"status": "running", "input": {"path": "a"}}
    assert "ran" in part["time"]
    publish(
        store,
        (
            "session.tool.success",
            {"message_id": mid, "call_id": "c", "content": "1: x", "metadata": {"n": 1}},
        ),
    )
    part = messages(store)[0]["content"][0]
    assert part["state"] == {
        "status": "completed",
        "input": {"path": "a"},
        "content": "1: x",
        "metadata": {"n": 1},
    }
    assert "completed" in part["time"]


def test_step_streamed_sets_time_streamed_and_a_restart_clears_it(store: Store) -> None:
    mid = "msg_r"
    publish(store, started(mid), ("session.step.streamed", {"message_id": mid}), ended(mid))
    [m] = messages(store)
    assert {"streamed", "completed"} <= set(m["time"])
    assert m["finish"] == "stop"
    publish(store, started(mid, agent="plan"))
    [m] = messages(store)
    assert set(m["time"]) == {"created"}
    assert "finish" not in m
    assert "tokens" not in m
    assert "cost" not in m
    assert m["agent"] == "plan"


def test_content_update_replaces_an_assistants_content(store: Store) -> None:
    mid = "msg_c"
    publish(store, started(mid), ("session.text", {"message_id": mid, "text": "old"}), ended(mid))
    content = [
        {"type": "text", "text": "replacement"},
        {"type": "reasoning", "text": "why", "time": {"created": 3}},
    ]
    publish(store, ("session.message.content.updated", {"message_id": mid, "content": content}))
    assert messages(store)[0]["content"] == content
    publish(store, ("session.message.content.updated", {"message_id": mid, "content": []}))
    assert messages(store)[0]["content"] == []


def test_a_failed_projection_rolls_its_append_back(store: Store) -> None:
    before = event_count(store)
    error = publish(
        store,
        started("msg_ok"),
        ("session.text", {"message_id": "msg_missing", "text": "x"}),
    )
    assert isinstance(error, SessionError)
    assert error.type == "session.message_not_found"
    assert event_count(store) == before
    assert messages(store) == []


def test_events_for_an_unknown_session_are_refused_and_not_stored(store: Store) -> None:
    before = event_count(store)
    error = publish(store, started("msg_x"), sid="ses_nobody")
    assert isinstance(error, SessionError)
    assert error.type == "session.not_found"
    assert event_count(store) == before


def test_a_synthetic_notice_with_an_existing_id_is_refused(store: Store) -> None:
    notice = ("session.synthetic", {"message_id": "job.1", "text": "done"})
    assert not isinstance(publish(store, notice), SessionError)
    error = publish(store, notice)
    assert isinstance(error, SessionError)
    assert error.type == "session.message_exists"
    assert len(messages(store)) == 1


def test_delete_removes_messages_events_inbox_and_children_and_leaves_a_tombstone(
    store: Store,
) -> None:
    create_here(store, "ses_child")
    conn = store.connection()
    conn.execute("UPDATE session SET parent_id = ? WHERE id = 'ses_child'", (SID,))
    publish(store, ("session.prompted", {"message_id": "m1", "text": "x", "mode": "queue"}))
    publish(store, started("m2"), sid="ses_child")
    q.inbox_add(conn, inbox_id="m1", session_id=SID, mode="queue", kind="user", data={}, created=1)
    publish(store, ("session.deleted", {}))
    assert conn.execute("SELECT COUNT(*) FROM session").fetchone()[0] == 0
    assert conn.execute("SELECT COUNT(*) FROM message").fetchone()[0] == 0
    assert conn.execute("SELECT COUNT(*) FROM inbox").fetchone()[0] == 0
    rows = conn.execute("SELECT aggregate_id, type FROM event").fetchall()
    assert rows == [(SID, "session.deleted")]


def test_claim_is_released_by_a_user_interrupt_but_kept_by_a_shutdown(store: Store) -> None:
    conn = store.connection()
    q.claim(conn, SID, 1)
    publish(store, ("session.execution.interrupted", {"reason": "shutdown"}))
    assert (q.get_session(conn, SID) or {})["status"] == "busy"
    assert q.list_suspended(conn) == [SID]
    publish(store, ("session.execution.interrupted", {"reason": "user"}))
    assert (q.get_session(conn, SID) or {})["status"] == "idle"
    assert q.list_suspended(conn) == []


def test_event_data_is_stored_normalised(store: Store) -> None:
    publish(store, ("session.synthetic", {"message_id": "n1", "text": "t"}))
    row = (
        store.connection()
        .execute("SELECT data FROM event WHERE type = 'session.synthetic'")
        .fetchone()
    )
    assert json.loads(row[0]) == {
        "message_id": "n1",
        "text": "t",
        "description": "",
        "metadata": {},
    }
