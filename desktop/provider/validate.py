"""Preflight: refuse to send a request a strict provider would reject (the rules of
docs/PROVIDER-RULES.md)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
MISTRAL_TOOL_CALL_ID = re.compile(r"^[A-Za-z0-9]{9}$")
ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})

# Rule identifiers carried by PreflightError.rule.
RULE_SHAPE = "shape"
RULE_TOOLS = "tools"


class PreflightError(Exception):
    """A request that must not be sent. `index` is the offending message (None: tools)."""

    def __init__(self, rule: str, index: int | None, message: str) -> None:
        where = f"messages[{index}]" if index is not None else "tools"
        super().__init__(f"Preflight rule {rule} at {where}: {message}")
        self.rule = rule
        self.index = index
        self.detail = message


def validate_request(body: Mapping[str, Any], *, mistral: bool = False) -> None:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise PreflightError(RULE_SHAPE, None, "messages must be a non-empty list")
    validate_messages(messages, mistral=mistral)
    tools = body.get("tools")
    if tools is not None:
        validate_tools(tools)


def validate_tools(tools: object) -> None:
    if not isinstance(tools, list):
        raise PreflightError(RULE_TOOLS, None, "tools must be a list")
    seen: set[str] = set()
    for i, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(tool, dict) or tool.get("type") != "function" or function is None:
            raise PreflightError(RULE_TOOLS, None, f"tools[{i}] is not a function tool")
        if not isinstance(name, str) or not TOOL_NAME.match(name):
            raise PreflightError(
                RULE_TOOLS,
                None,
                f"tools[{i}].function.name {name!r} does not match {TOOL_NAME.pattern}",
            )
        if name in seen:
            raise PreflightError(RULE_TOOLS, None, f"tools[{i}] repeats the name {name!r}")
        seen.add(name)
        parameters = function.get("parameters")
        if parameters is not None and not isinstance(parameters, dict):
            raise PreflightError(
                RULE_TOOLS, None, f"tools[{i}].function.parameters is not an object"
            )


def _valid_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _check_tool_call(index: int, position: int, call: object, mistral: bool) -> str:
    """Rule 5 (and 7's id shape) for `messages[index].tool_calls[position]`; its id."""
    where = f"tool_calls[{position}]"
    if not isinstance(call, dict):
        raise PreflightError("5", index, f"{where} is not an object")
    call_id = call.get("id")
    if not isinstance(call_id, str) or not call_id:
        raise PreflightError("5", index, f"{where}.id must be a non-empty string")
    if call.get("type") != "function":
        raise PreflightError("5", index, f'{where}.type must be "function"')
    function = call.get("function")
    if not isinstance(function, dict):
        raise PreflightError("5", index, f"{where}.function must be an object")
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise PreflightError("5", index, f"{where}.function.name must be a non-empty string")
    arguments = function.get("arguments")
    if not isinstance(arguments, str) or not _valid_json(arguments):
        raise PreflightError("5", index, f"{where}.function.arguments must be a JSON string")
    if mistral and not MISTRAL_TOOL_CALL_ID.match(call_id):
        raise PreflightError(
            "7", index, f"{where}.id {call_id!r} is not 9 characters of [a-zA-Z0-9]"
        )
    return call_id


def validate_messages(messages: Sequence[object], *, mistral: bool = False) -> None:
    """Raise PreflightError for the first message that breaks a rule."""
    pending: list[str] = []  # ids of the open tool_calls message still owed an answer
    pending_at = -1
    answerable: set[str] = set()  # ids of the nearest preceding assistant's tool_calls
    answered: dict[str, int] = {}  # every tool_call_id answered so far, and where
    previous_role = ""
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise PreflightError(RULE_SHAPE, index, "a message must be an object")
        role = message.get("role")
        if role not in ROLES:
            raise PreflightError(RULE_SHAPE, index, f"unknown role {role!r}")
        if pending and role != "tool":
            raise PreflightError(
                "1",
                pending_at,
                "an assistant message with tool_calls is not followed by tool messages for "
                f"{', '.join(pending)} (a {role} message comes first, at messages[{index}])",
            )
        if role == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id:
                raise PreflightError("6", index, "a tool message needs a string tool_call_id")
            if not isinstance(message.get("content"), str):
                raise PreflightError("6", index, "a tool message needs a string content")
            if call_id in answered:
                raise PreflightError(
                    "3",
                    index,
                    f"tool_call_id {call_id!r} is answered twice, in messages[{answered[call_id]}] "
                    f"and messages[{index}]",
                )
            if call_id not in answerable:
                raise PreflightError(
                    "2",
                    index,
                    f"tool_call_id {call_id!r} answers no tool_calls entry of the nearest "
                    "preceding assistant message",
                )
            answered[call_id] = index
            if call_id in pending:
                pending.remove(call_id)
        elif role == "assistant":
            answerable = set()
            content = message.get("content")
            if "tool_calls" in message and message["tool_calls"] is not None:
                calls = message["tool_calls"]
                if not isinstance(calls, list) or not calls:
                    raise PreflightError("4", index, "tool_calls must be a non-empty list")
                if content is not None and not isinstance(content, str):
                    raise PreflightError(
                        "4",
                        index,
                        "an assistant message with tool_calls needs null or string content",
                    )
                ids = [_check_tool_call(index, i, call, mistral) for i, call in enumerate(calls)]
                if len(set(ids)) != len(ids):
                    raise PreflightError("3", index, "tool_calls repeats a tool call id")
                pending = list(ids)
                pending_at = index
                answerable = set(ids)
        elif role == "user" and mistral and previous_role == "tool":
            raise PreflightError("7", index, "a user message directly follows a tool message")
        previous_role = role
    if pending:
        raise PreflightError(
            "1",
            pending_at,
            f"an assistant message with tool_calls has no tool messages for {', '.join(pending)}",
        )
