"""Any history the runner can leave behind lowers to a request a strict provider accepts.

Hypothesis generates turns (text, tool calls in every state, synthetic notices, prompts),
cuts the event sequence at any point (a crash), optionally settles the open parts the way
the runner does before a drain, and checks the lowered request with both Desk's preflight
and the strict fake's independent rules.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop.agent.lowering import INTERRUPTED, LoweringOptions, lower_messages
from desktop.events.bus import draft
from desktop.events.history import open_tool_parts
from desktop.provider.validate import validate_messages
from desktop.store import sessions as q
from tests.support.fake_provider import check_messages
from tests.support.sessions import open_here, publish_here

SID = "ses_prop"
TEXT = st.text(min_size=0, max_size=6)
NAMES = st.sampled_from(["shell", "read", "bad name!", ""])


@st.composite
def turn(draw: st.DrawFn, n: int) -> list[tuple[str, dict[str, Any]]]:
    mid = f"msg_a{n}"
    out: list[tuple[str, dict[str, Any]]] = []
    if draw(st.booleans()):
        out.append(("session.prompted", {"message_id": f"msg_u{n}", "text": "q", "mode": "queue"}))
    out.append(
        (
            "session.step.started",
            {"message_id": mid, "agent": "b", "model": {"id": "m", "provider_id": "p"}},
        )
    )
    for k in range(draw(st.integers(0, 3))):
        choice = draw(st.sampled_from(["text", "reasoning", "tool"]))
        if choice != "tool":
            out.append((f"session.{choice}", {"message_id": mid, "text": draw(TEXT)}))
            continue
        call = draw(st.sampled_from([f"c{n}{k}", "dup", ""])) or f"c{n}{k}x"
        name = draw(NAMES) or "t"
        out.append(
            ("session.tool.input.started", {"message_id": mid, "call_id": call, "name": name})
        )
        stage = draw(st.integers(0, 2))
        if stage >= 1:
            args = draw(st.sampled_from([{}, {"command": "x"}, {"n": [1, {"a": None}]}]))
            out.append(
                (
                    "session.tool.called",
                    {"message_id": mid, "call_id": call, "name": name, "input": args},
                )
            )
        if stage == 2:
            if draw(st.booleans()):
                out.append(
                    (
                        "session.tool.success",
                        {"message_id": mid, "call_id": call, "content": draw(TEXT)},
                    )
                )
            else:
                err = {"type": "e", "message": draw(TEXT)}
                out.append(
                    ("session.tool.failed", {"message_id": mid, "call_id": call, "error": err})
                )
    if draw(st.booleans()):
        out.append(("session.step.ended", {"message_id": mid, "finish": "stop"}))
    if draw(st.booleans()):
        out.append(("session.synthetic", {"message_id": f"msg_s{n}", "text": "notice"}))
    return out


@st.composite
def histories(draw: st.DrawFn) -> tuple[list[tuple[str, dict[str, Any]]], int, bool, bool]:
    events = [e for n in range(draw(st.integers(1, 4))) for e in draw(turn(n))]
    crash = draw(st.integers(0, len(events)))
    return events, crash, draw(st.booleans()), draw(st.booleans())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_any_crash_point_of_any_history_lowers_to_a_valid_request(
    case: tuple[list[tuple[str, dict[str, Any]]], int, bool, bool],
) -> None:
    events, crash, settle_first, mistral = case
    with tempfile.TemporaryDirectory() as folder:
        store = open_here(Path(folder) / "p.sqlite3")
        publish_here(store, [draft(SID, "session.created", {"title": "t", "directory": "/"})])
        for kind, data in events[:crash]:
            publish_here(store, [draft(SID, kind, data)])  # refused ones (duplicates) are skipped
        messages = q.all_messages(store.connection(), SID)
        if settle_first:
            for mid, part in open_tool_parts(messages):
                err = {"type": "aborted", "message": INTERRUPTED.format(name=part["name"])}
                failed = {"message_id": mid, "call_id": part["id"], "error": err}
                publish_here(store, [draft(SID, "session.tool.failed", failed)])
            notice = {"message_id": "msg_notice", "text": "The server restarted"}
            publish_here(store, [draft(SID, "session.synthetic", notice)])
            messages = q.all_messages(store.connection(), SID)
        lowered = lower_messages(messages, LoweringOptions(mistral=mistral, system="s"))
        validate_messages(lowered, mistral=mistral)
        check_messages(lowered, mistral=mistral, rule1="openai")
