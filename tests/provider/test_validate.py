"""The preflight validator names the rule and the message index of each violation."""

from __future__ import annotations

from typing import Any

import pytest

from desktop.provider.validate import PreflightError, validate_messages, validate_request


def call(call_id: str = "call_a", name: str = "read", arguments: str = "{}") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def asst(*calls: dict[str, Any], content: Any = None) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


def tool(call_id: str = "call_a", content: Any = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


USER = {"role": "user", "content": "hi"}


def rule_of(messages: list[Any], *, mistral: bool = False) -> tuple[str, int | None]:
    with pytest.raises(PreflightError) as caught:
        validate_messages(messages, mistral=mistral)
    return caught.value.rule, caught.value.index


def test_a_paired_history_passes() -> None:
    validate_messages(
        [
            USER,
            asst(call("a"), call("b")),
            tool("a"),
            tool("b"),
            {"role": "assistant", "content": "done"},
            USER,
        ]
    )


def test_rule1_unanswered_call_followed_by_user_names_the_assistant() -> None:
    assert rule_of([USER, asst(call("a"), call("b")), tool("a"), USER]) == ("1", 1)


def test_rule1_unanswered_call_at_the_end() -> None:
    assert rule_of([USER, asst(call("a"))]) == ("1", 1)


def test_rule1_message_names_the_missing_ids() -> None:
    with pytest.raises(PreflightError, match="call_z"):
        validate_messages([USER, asst(call("call_z")), USER])


def test_rule2_tool_without_preceding_tool_calls() -> None:
    assert rule_of([USER, tool("a")]) == ("2", 1)


def test_rule2_tool_answering_an_id_of_an_older_assistant() -> None:
    history = [USER, asst(call("a")), tool("a"), asst(call("b")), tool("b"), tool("c")]
    assert rule_of(history) == ("2", 5)


def test_rule3_a_tool_call_answered_twice_is_refused() -> None:
    assert rule_of([USER, asst(call("a")), tool("a"), tool("a")]) == ("3", 3)


def test_rule3_duplicate_ids_inside_one_tool_calls_list() -> None:
    assert rule_of([USER, asst(call("a"), call("a")), tool("a")]) == ("3", 1)


def test_rule4_empty_tool_calls() -> None:
    assert rule_of([USER, asst()]) == ("4", 1)


def test_rule4_content_must_be_null_or_string_with_tool_calls() -> None:
    content = [{"type": "text", "text": "x"}]
    assert rule_of([USER, asst(call("a"), content=content), tool("a")]) == ("4", 1)


@pytest.mark.parametrize(
    "bad",
    [
        {"id": "", "type": "function", "function": {"name": "r", "arguments": "{}"}},
        {"type": "function", "function": {"name": "r", "arguments": "{}"}},
        {"id": "a", "type": "tool", "function": {"name": "r", "arguments": "{}"}},
        {"id": "a", "type": "function", "function": {"name": "", "arguments": "{}"}},
        {"id": "a", "type": "function", "function": {"name": "r", "arguments": {"x": 1}}},
        {"id": "a", "type": "function", "function": {"name": "r", "arguments": '{"x": '}},
        {"id": "a", "type": "function"},
    ],
)
def test_rule5_malformed_tool_call(bad: dict[str, Any]) -> None:
    assert rule_of([USER, asst(bad), tool("a")]) == ("5", 1)


def test_rule6_tool_message_without_id_or_with_non_string_content() -> None:
    assert rule_of([USER, asst(call("a")), {"role": "tool", "content": "x"}]) == ("6", 2)
    assert rule_of([USER, asst(call("a")), tool("a", content=None)]) == ("6", 2)
    assert rule_of([USER, asst(call("a")), tool("a", content=["x"])]) == ("6", 2)


def test_rule7_applies_to_mistral_only() -> None:
    history = [USER, asst(call("abcDEF123")), tool("abcDEF123"), USER]
    validate_messages(history)
    assert rule_of(history, mistral=True) == ("7", 3)
    bridged = [*history[:3], {"role": "assistant", "content": "Done."}, USER]
    validate_messages(bridged, mistral=True)


def test_rule7_mistral_ids_are_nine_alphanumerics() -> None:
    assert rule_of([USER, asst(call("call_abc")), tool("call_abc")], mistral=True) == ("7", 1)
    validate_messages([USER, asst(call("call_abc")), tool("call_abc")])


def test_unknown_role_and_non_object_message_are_shape_errors() -> None:
    assert rule_of([{"role": "robot", "content": "x"}]) == ("shape", 0)
    assert rule_of([USER, "text"]) == ("shape", 1)


def test_request_needs_messages_and_valid_tool_names() -> None:
    with pytest.raises(PreflightError):
        validate_request({"messages": []})

    def tools(name: str) -> dict[str, Any]:
        return {"messages": [USER], "tools": [{"type": "function", "function": {"name": name}}]}

    validate_request(tools("read_file-2"))
    for bad in ["has space", "", "x" * 65, "dot.name", "ünï"]:
        with pytest.raises(PreflightError) as caught:
            validate_request(tools(bad))
        assert caught.value.rule == "tools"
        assert caught.value.index is None
