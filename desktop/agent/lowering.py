"""Lowering: projected session messages to chat-completions `messages`, a pure function and the
one place the history's order is decided."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

INTERRUPTED = "Tool execution interrupted: {name}"
MISTRAL_BRIDGE = "Done."  # the assistant turn Mistral needs between a tool result and a user
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True)
class LoweringOptions:
    mistral: bool = False
    # Echo an assistant's reasoning back under this field (DeepSeek-style servers want
    # `reasoning_content` with tool calls); None drops it, which every provider accepts.
    reasoning_field: str | None = None
    system: str | None = None


def _mistral_id(source: str, salt: int) -> str:
    digest = int.from_bytes(hashlib.sha256(f"{salt}:{source}".encode()).digest()[:8], "big")
    chars = []
    for _ in range(9):
        digest, rest = divmod(digest, 62)
        chars.append(_BASE62[rest])
    return "".join(chars)


class _Ids:
    """Outgoing tool call ids: the stored id when usable (OpenAI caps ids at 40 characters),
    unique across the request."""

    def __init__(self, mistral: bool) -> None:
        self._mistral = mistral
        self._used: set[str] = set()

    def make(self, stored: object, fallback: str) -> str:
        source = stored if isinstance(stored, str) and stored else fallback
        if not self._mistral and source not in self._used and len(source) <= 40:
            self._used.add(source)
            return source
        salt = 0
        while True:
            candidate = (
                _mistral_id(source, salt)
                if self._mistral
                else f"call_{hashlib.sha256(f'{salt}:{source}'.encode()).hexdigest()[:24]}"
            )
            if candidate not in self._used:
                self._used.add(candidate)
                return candidate
            salt += 1


def _tool_name(raw: object) -> str:
    name = raw if isinstance(raw, str) else ""
    if _TOOL_NAME.match(name):
        return name
    cleaned = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64]
    return cleaned or "tool"


def _arguments(raw: object) -> str:
    """Always a JSON text: a dict as JSON, a string only if it parses (a half-streamed
    argument string does not), anything unusable as `{}`."""
    if isinstance(raw, str):
        try:
            json.loads(raw)
        except ValueError:
            return "{}"
        return raw
    if raw is None:
        return "{}"
    try:
        return json.dumps(raw, ensure_ascii=False)
    except (TypeError, ValueError):
        return "{}"


def _text(raw: object) -> str:
    if isinstance(raw, str):
        return raw
    if raw is None:
        return ""
    try:
        return json.dumps(raw, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(raw)


def tool_result_text(part: Mapping[str, Any]) -> str:
    """What the model reads as the result of one tool part, whatever its state."""
    state = part.get("state")
    state = state if isinstance(state, Mapping) else {}
    status = state.get("status")
    if status == "completed":
        return _text(state.get("content"))
    if status == "error":
        error = state.get("error")
        if isinstance(error, Mapping):
            return _text(error.get("message") or error.get("type") or "Tool failed")
        return _text(error) or "Tool failed"
    return INTERRUPTED.format(name=part.get("name") or "tool")


def _assistant(
    message: Mapping[str, Any], position: int, ids: _Ids, options: LoweringOptions
) -> list[dict[str, Any]]:
    content = message.get("content")
    parts = content if isinstance(content, list) else []
    texts: list[str] = []
    reasoning: list[str] = []
    calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for index, part in enumerate(parts):
        if not isinstance(part, Mapping):
            continue
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "reasoning" and isinstance(part.get("text"), str):
            reasoning.append(part["text"])
        elif kind == "tool":
            call_id = ids.make(part.get("id"), f"{message.get('id')}:{position}:{index}")
            state = part.get("state")
            raw_input = state.get("input") if isinstance(state, Mapping) else None
            calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {
                        "name": _tool_name(part.get("name")),
                        "arguments": _arguments(raw_input),
                    },
                }
            )
            results.append(
                {"role": "tool", "tool_call_id": call_id, "content": tool_result_text(part)}
            )
    text = "".join(texts)
    if not calls and not text:
        return []  # an empty assistant (failed before output, or reasoning only) says nothing
    lowered: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        lowered["tool_calls"] = calls
    if options.reasoning_field and reasoning:
        lowered[options.reasoning_field] = "".join(reasoning)
    return [lowered, *results]


def lower_messages(
    messages: Sequence[Mapping[str, Any]], options: LoweringOptions | None = None
) -> list[dict[str, Any]]:
    """The `messages` of a chat-completions request for this history."""
    options = options or LoweringOptions()
    ids = _Ids(options.mistral)
    out: list[dict[str, Any]] = []
    if options.system:
        out.append({"role": "system", "content": options.system})
    for position, message in enumerate(messages):
        if message.get("reverted"):
            continue  # a revert hid it from the model (the person still sees it)
        kind = message.get("type")
        if kind in ("user", "synthetic"):
            text = message.get("text")
            if isinstance(text, str) and text:
                if options.mistral and out and out[-1]["role"] == "tool":
                    out.append({"role": "assistant", "content": MISTRAL_BRIDGE})
                out.append({"role": "user", "content": text})
        elif kind == "assistant":
            out.extend(_assistant(message, position, ids, options))
    return out
