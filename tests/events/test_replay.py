"""Replaying a log into an empty database reproduces the same rows (ARCHITECTURE invariant 2)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop.events.bus import draft
from desktop.events.errors import SessionError
from desktop.events.schema import DURABLE
from tests.support.sessions import (
    checkpoint_events,
    every_event,
    open_here,
    projection,
    publish_here,
    replay_here,
    whole_log,
)


def _replayed_equals_original(source_dir: Path, requests: list[list[tuple[str, str, Any]]]) -> int:
    source = open_here(source_dir / "source.sqlite3")
    committed = 0
    for request in requests:
        result = publish_here(source, [draft(sid, kind, data) for sid, kind, data in request])
        committed += not isinstance(result, SessionError)
    events = whole_log(source.connection())
    target = open_here(source_dir / "target.sqlite3")
    replay_here(target, events)
    assert projection(target.connection()) == projection(source.connection())
    return committed


def test_replay_of_every_event_type_reproduces_the_projection(tmp_path: Path) -> None:
    requests = [[("ses_a", "session.created", {"title": "a", "directory": "/"})]]
    requests.append([("ses_a", kind, data) for kind, data in every_event()])
    requests.append([("ses_a", kind, data) for kind, data in checkpoint_events("msg_a")])
    requests.append(
        [("ses_b", "session.created", {"title": "b", "directory": "/", "parent_id": "ses_a"})]
    )
    requests.append([("ses_c", "session.created", {"title": "c", "directory": "/"})])
    requests.append([("ses_c", "session.deleted", {})])
    used = {kind for request in requests for _, kind, _ in request}
    assert used == set(DURABLE)
    assert _replayed_equals_original(tmp_path, requests) == len(requests)


MESSAGES = st.sampled_from(["m1", "m2", "m3", "m4"])
CALLS = st.sampled_from(["c1", "c2"])
TEXT = st.text(max_size=8)
ERROR = st.fixed_dictionaries({"type": st.just("e"), "message": TEXT})
PART = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": TEXT}),
    st.fixed_dictionaries({"type": st.just("reasoning"), "text": TEXT}),
)
Step = tuple[str, dict[str, Any]]


def _event(kind: str, **fields: st.SearchStrategy[Any]) -> st.SearchStrategy[Step]:
    return st.tuples(st.just(kind), st.fixed_dictionaries(fields))


@st.composite
def _tool(draw: st.DrawFn, mid: str) -> list[Step]:
    """A tool call's events in order, sometimes without their start (then refused)."""
    call = draw(CALLS)
    settled: list[Step] = [
        ("session.tool.success", {"message_id": mid, "call_id": call, "content": "ok"}),
        (
            "session.tool.failed",
            {"message_id": mid, "call_id": call, "error": {"type": "t", "message": "x"}},
        ),
    ]
    steps: list[Step] = [
        ("session.tool.input.started", {"message_id": mid, "call_id": call, "name": "read"}),
        ("session.tool.called", {"message_id": mid, "call_id": call, "name": "read", "input": {}}),
        draw(st.sampled_from(settled)),
    ]
    return steps[draw(st.integers(0, 2)) :]


@st.composite
def _turn(draw: st.DrawFn) -> list[Step]:
    """An assistant step: started, then a mix of what a step publishes."""
    mid = draw(MESSAGES)
    body: list[Step] = []
    for kind in draw(st.lists(st.integers(0, 8), max_size=8)):
        if kind == 0:
            body.append(("session.text", {"message_id": mid, "text": draw(TEXT)}))
        elif kind == 1:
            body.append(("session.reasoning", {"message_id": mid, "text": draw(TEXT)}))
        elif kind == 2:
            body.append(("session.step.streamed", {"message_id": mid}))
        elif kind == 3:
            body += draw(_tool(mid))
        elif kind == 4:
            body.append(("session.step.ended", {"message_id": mid, "finish": "stop"}))
        elif kind == 5:
            body.append(("session.step.failed", {"message_id": mid, "error": draw(ERROR)}))
        elif kind == 6:
            content = draw(st.lists(PART, max_size=3))
            body.append(
                ("session.message.content.updated", {"message_id": mid, "content": content})
            )
        elif kind == 7:
            body.append(
                (
                    "session.retry.scheduled",
                    {"message_id": mid, "attempt": 1, "at": 2, "error": draw(ERROR)},
                )
            )
        else:
            body.append(
                ("session.step.started", {"message_id": mid, "agent": "plan", "model": MODEL})
            )
    return [("session.step.started", {"message_id": mid, "agent": "build", "model": MODEL}), *body]


MODEL = {"id": "m", "provider_id": "p"}
SESSION_EVENTS = st.one_of(
    _event("session.updated", title=TEXT),
    _event(
        "session.prompted", message_id=MESSAGES, text=TEXT, mode=st.sampled_from(["queue", "steer"])
    ),
    _event("session.synthetic", message_id=MESSAGES, text=TEXT),
    _event("session.execution.interrupted", reason=st.sampled_from(["user", "shutdown"])),
    _event("session.resume.exhausted", error=ERROR),
    _event("session.deleted"),
)
SESSIONS = st.sampled_from(["ses_1", "ses_2"])


@st.composite
def _requests(draw: st.DrawFn) -> list[list[tuple[str, str, Any]]]:
    """Turns and session events; each turn published whole or one event per request."""
    out: list[list[tuple[str, str, Any]]] = []
    for _ in range(draw(st.integers(1, 10))):
        sid = draw(SESSIONS)
        steps = draw(_turn()) if draw(st.integers(0, 3)) else [draw(SESSION_EVENTS)]
        triples = [(sid, kind, data) for kind, data in steps]
        if draw(st.booleans()):
            out.append(triples)
        else:
            out += [[t] for t in triples]
    return out


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_requests())
def test_replay_of_generated_event_sequences_reproduces_the_projection(
    requests: list[list[tuple[str, str, Any]]],
) -> None:
    """Invalid events in the mix (a tool settled before it was called, a prompt reusing an
    assistant's id, events after a deletion) are refused with their whole request; whatever
    committed replays to the same rows."""
    created = [
        [(sid, "session.created", {"title": sid, "directory": "/"})] for sid in ("ses_1", "ses_2")
    ]
    with tempfile.TemporaryDirectory() as tmp:
        _replayed_equals_original(Path(tmp), created + requests)
