"""Lowering projected messages: always a history a strict provider accepts.

The property tests generate arbitrary histories (tool parts left streaming or running by a
crash, duplicate or empty ids, half-streamed arguments, synthetic notices anywhere, empty
assistants) and check the lowered messages against both Desk's preflight validator and the
strict fake provider's independent rule checker.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop.agent.lowering import INTERRUPTED, LoweringOptions, lower_messages
from desktop.provider.validate import MISTRAL_TOOL_CALL_ID, validate_messages
from tests.support.fake_provider import check_messages

STATUSES = ["streaming", "running", "completed", "error"]


def tool_part(
    call_id: str, name: str = "shell", status: str = "completed", **state: Any
) -> dict[str, Any]:
    return {
        "type": "tool",
        "id": call_id,
        "name": name,
        "state": {"status": status, "input": state.pop("input", {"command": "ls"}), **state},
        "time": {"created": 1},
    }


def assistant(*parts: dict[str, Any], mid: str = "msg_a") -> dict[str, Any]:
    return {
        "id": mid,
        "type": "assistant",
        "agent": "build",
        "model": {"id": "m", "provider_id": "p"},
        "content": list(parts),
        "time": {"created": 1},
    }


def user(text: str, mid: str = "msg_u") -> dict[str, Any]:
    return {"id": mid, "type": "user", "text": text, "time": 1}


def synthetic(text: str) -> dict[str, Any]:
    return {
        "id": "msg_s",
        "type": "synthetic",
        "text": text,
        "description": "restart",
        "metadata": {},
        "time": 1,
    }


def accepted_by_both(lowered: list[dict[str, Any]], mistral: bool) -> None:
    validate_messages(lowered, mistral=mistral)
    check_messages(lowered, mistral=mistral, rule1="openai")


def test_seed_scenario_running_tool_then_restart_notice_lowers_results_first() -> None:
    history = [
        user("run it"),
        assistant(
            {"type": "text", "text": "Running."},
            tool_part("call_1", "shell", "running", input={"command": "sleep 5"}),
        ),
        synthetic("The server restarted while you were working..."),
    ]
    lowered = lower_messages(history, LoweringOptions(system="sys"))
    assert lowered == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "run it"},
        {
            "role": "assistant",
            "content": "Running.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "shell", "arguments": '{"command": "sleep 5"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "Tool execution interrupted: shell"},
        {"role": "user", "content": "The server restarted while you were working..."},
    ]
    accepted_by_both(lowered, mistral=False)


def test_results_follow_their_calls_in_order_with_each_state_lowered() -> None:
    history = [
        user("go"),
        assistant(
            tool_part("c1", "read", "completed", content="1: hi"),
            tool_part("c2", "grep", "error", error={"type": "x", "message": "no such file"}),
            tool_part("c3", "glob", "error", error="plain failure"),
            tool_part("c4", "edit", "streaming", input='{"path": "a'),
        ),
    ]
    lowered = lower_messages(history)
    assert [m["role"] for m in lowered] == ["user", "assistant", "tool", "tool", "tool", "tool"]
    assert [m["content"] for m in lowered[2:]] == [
        "1: hi",
        "no such file",
        "plain failure",
        INTERRUPTED.format(name="edit"),
    ]
    # half-streamed arguments are not JSON: the call still carries a JSON string
    assert lowered[1]["tool_calls"][3]["function"]["arguments"] == "{}"
    accepted_by_both(lowered, mistral=False)


def test_empty_assistant_messages_are_dropped() -> None:
    history = [user("a"), assistant(), assistant({"type": "reasoning", "text": "hm"}), user("b")]
    assert lower_messages(history) == [
        {"role": "user", "content": "a"},
        {"role": "user", "content": "b"},
    ]


def test_reasoning_is_dropped_by_default_and_echoed_under_the_profiles_field() -> None:
    history = [
        user("q"),
        assistant({"type": "reasoning", "text": "think"}, {"type": "text", "text": "answer"}),
    ]
    assert "reasoning_content" not in lower_messages(history)[1]
    echoed = lower_messages(history, LoweringOptions(reasoning_field="reasoning_content"))
    assert echoed[1] == {"role": "assistant", "content": "answer", "reasoning_content": "think"}


def test_duplicate_and_empty_ids_become_unique_and_stay_paired() -> None:
    history = [
        user("x"),
        assistant(tool_part("dup"), tool_part("dup"), tool_part(""), mid="m1"),
        assistant(tool_part("dup"), mid="m2"),
    ]
    lowered = lower_messages(history)
    ids = [c["id"] for m in lowered if m["role"] == "assistant" for c in m["tool_calls"]]
    assert len(set(ids)) == 4
    assert ids[0] == "dup"
    accepted_by_both(lowered, mistral=False)


def test_mistral_ids_are_nine_alphanumerics_mapped_deterministically() -> None:
    history = [user("x"), assistant(tool_part("call_abc"), tool_part("call_def")), user("more")]
    options = LoweringOptions(mistral=True)
    first, second = lower_messages(history, options), lower_messages(history, options)
    assert first == second
    ids = [c["id"] for c in first[1]["tool_calls"]]
    assert all(MISTRAL_TOOL_CALL_ID.match(i) for i in ids)
    assert len(set(ids)) == 2
    assert [m["tool_call_id"] for m in first[2:4]] == ids
    # no user right after a tool message: an assistant turn bridges them
    assert first[4] == {"role": "assistant", "content": "Done."}
    assert first[5] == {"role": "user", "content": "more"}
    accepted_by_both(first, mistral=True)


def test_tool_names_outside_the_pattern_are_made_safe() -> None:
    lowered = lower_messages([user("x"), assistant(tool_part("c", name="bad name!"))])
    assert lowered[1]["tool_calls"][0]["function"]["name"] == "bad_name_"


# --- property tests ----------------------------------------------------------------------

ids = st.one_of(
    st.sampled_from(["call_1", "call_2", "", "x" * 60, "abcDEF123"]), st.text(max_size=12)
)
names = st.one_of(st.sampled_from(["shell", "read", "edit", ""]), st.text(max_size=70))
inputs = st.one_of(
    st.none(),
    st.dictionaries(st.text(max_size=5), st.one_of(st.integers(), st.text(max_size=5)), max_size=3),
    st.text(max_size=20),  # raw, maybe half-streamed, argument text
    st.just('{"path": "a"}'),
)
results = st.one_of(
    st.none(), st.text(max_size=20), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)
)
errors = st.one_of(
    st.none(),
    st.text(max_size=10),
    st.fixed_dictionaries({"type": st.just("aborted"), "message": st.text(max_size=10)}),
)


@st.composite
def tool_parts(draw: st.DrawFn) -> dict[str, Any]:
    part: dict[str, Any] = {
        "type": "tool",
        "id": draw(ids),
        "name": draw(names),
        "state": {"status": draw(st.sampled_from([*STATUSES, "weird"])), "input": draw(inputs)},
        "time": {"created": 1},
    }
    if draw(st.booleans()):
        part["state"]["content"] = draw(results)
    if draw(st.booleans()):
        part["state"]["error"] = draw(errors)
    if draw(st.integers(0, 20)) == 0:
        del part["state"]  # a part the projection never finished writing
    return part


parts = st.one_of(
    tool_parts(),
    st.builds(lambda t: {"type": "text", "text": t}, st.text(max_size=8)),
    st.builds(lambda t: {"type": "reasoning", "text": t}, st.text(max_size=8)),
)
messages = st.one_of(
    st.builds(user, st.text(max_size=8)),
    st.builds(synthetic, st.text(max_size=8)),
    st.builds(
        lambda ps, mid: assistant(*ps, mid=mid),
        st.lists(parts, max_size=5),
        st.sampled_from(["m1", "m2", "m3"]),
    ),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(messages, max_size=12), st.booleans(), st.sampled_from([None, "reasoning_content"]))
def test_any_history_lowers_to_a_request_both_validators_accept(
    history: list[dict[str, Any]], mistral: bool, reasoning_field: str | None
) -> None:
    options = LoweringOptions(mistral=mistral, reasoning_field=reasoning_field, system="sys")
    lowered = lower_messages(history, options)
    accepted_by_both(lowered, mistral)


@settings(max_examples=200, deadline=None)
@given(st.lists(messages, max_size=12))
def test_every_tool_part_is_one_call_answered_at_once_and_nothing_is_reordered(
    history: list[dict[str, Any]],
) -> None:
    lowered = lower_messages(history)
    expected_parts = sum(
        1 for m in history if m["type"] == "assistant" for p in m["content"] if p["type"] == "tool"
    )
    calls = [c for m in lowered if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    assert len(calls) == expected_parts
    for i, message in enumerate(lowered):
        if message.get("tool_calls"):
            n = len(message["tool_calls"])
            answers = lowered[i + 1 : i + 1 + n]
            assert [a["tool_call_id"] for a in answers] == [c["id"] for c in message["tool_calls"]]
    # user and synthetic texts keep their relative order
    texts = [m["text"] for m in history if m["type"] in ("user", "synthetic") and m["text"]]
    assert [m["content"] for m in lowered if m["role"] == "user"] == texts


@pytest.mark.parametrize("status", ["streaming", "running"])
def test_unsettled_tool_parts_lower_as_interrupted_errors(status: str) -> None:
    lowered = lower_messages([user("x"), assistant(tool_part("c", "grep", status))])
    assert lowered[-1] == {
        "role": "tool",
        "tool_call_id": "c",
        "content": "Tool execution interrupted: grep",
    }
