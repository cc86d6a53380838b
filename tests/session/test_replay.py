"""Replaying a log into an empty database reproduces the same rows (ARCHITECTURE invariant 2)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop.session.bus import draft
from desktop.session.errors import SessionError
from desktop.session.schema import DURABLE
from tests.support.sessions import (
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
    requests.append(
        [("ses_b", "session.created", {"title": "b", "directory": "/", "parent_id": "ses_a"})]
    )
    requests.append([("ses_c", "session.created", {"title": "c", "directory": "/"})])
    requests.append([("ses_c", "session.deleted", {})])
    used = {kind for request in requests for _, kind, _ in request}
    assert used == set(DURABLE)
    assert _replayed_equals_original(tmp_path, requests) == len(requests)


MESSAGES = st.sampled_from(["m1", "m2", "m3"])
CALLS = st.sampled_from(["c1", "c2"])
TEXT = st.text(max_size=8)
ERROR = st.fixed_dictionaries({"type": st.just("e"), "message": TEXT})
PART = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": TEXT}),
    st.fixed_dictionaries({"type": st.just("reasoning"), "text": TEXT}),
)


def _event(
    kind: str, **fields: st.SearchStrategy[Any]
) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    return st.tuples(st.just(kind), st.fixed_dictionaries(fields))


EVENTS = st.one_of(
    _event("session.updated", title=TEXT),
    _event(
        "session.prompted", message_id=MESSAGES, text=TEXT, mode=st.sampled_from(["queue", "steer"])
    ),
    _event("session.synthetic", message_id=MESSAGES, text=TEXT),
    _event(
        "session.step.started",
        message_id=MESSAGES,
        agent=st.sampled_from(["build", "plan"]),
        model=st.just({"id": "m", "provider_id": "p"}),
    ),
    _event("session.step.streamed", message_id=MESSAGES),
    _event("session.step.ended", message_id=MESSAGES, finish=st.sampled_from(["stop", "length"])),
    _event("session.step.failed", message_id=MESSAGES, error=ERROR),
    _event("session.text", message_id=MESSAGES, text=TEXT),
    _event("session.reasoning", message_id=MESSAGES, text=TEXT),
    _event("session.tool.input.started", message_id=MESSAGES, call_id=CALLS, name=st.just("read")),
    _event(
        "session.tool.called",
        message_id=MESSAGES,
        call_id=CALLS,
        name=st.just("read"),
        input=st.dictionaries(st.just("path"), TEXT, max_size=1),
    ),
    _event("session.tool.success", message_id=MESSAGES, call_id=CALLS, content=TEXT),
    _event("session.tool.failed", message_id=MESSAGES, call_id=CALLS, error=ERROR),
    _event("session.retry.scheduled", attempt=st.integers(0, 3), at=st.integers(0, 9), error=ERROR),
    _event(
        "session.message.content.updated", message_id=MESSAGES, content=st.lists(PART, max_size=3)
    ),
    _event("session.execution.interrupted", reason=st.sampled_from(["user", "shutdown"])),
    _event("session.resume.exhausted", error=ERROR),
    _event("session.deleted"),
)
SESSIONS = st.sampled_from(["ses_1", "ses_2"])
REQUEST = st.lists(st.tuples(SESSIONS, EVENTS), min_size=1, max_size=4)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(REQUEST, max_size=25))
def test_replay_of_generated_event_sequences_reproduces_the_projection(
    requests: list[list[tuple[str, tuple[str, dict[str, Any]]]]],
) -> None:
    """Invalid events in the mix (unknown messages, tools before calls) are refused with
    their whole request; whatever committed replays to the same rows."""
    created = [
        [(sid, "session.created", {"title": sid, "directory": "/"})] for sid in ("ses_1", "ses_2")
    ]
    flat = created + [[(sid, kind, data) for sid, (kind, data) in r] for r in requests]
    with tempfile.TemporaryDirectory() as tmp:
        _replayed_equals_original(Path(tmp), flat)
