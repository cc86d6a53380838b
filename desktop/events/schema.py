"""The shapes the engine accepts (durable and ephemeral event data, assistant content parts)
and the one validation that everything published passes."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from desktop.events.errors import invalid

ID = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
MAX_TITLE = 500
MAX_DIRECTORY = 4096
MAX_TEXT = 1_000_000  # characters of one prompt, text or tool output
MAX_NAME = 200
MAX_PARTS = 10_000

Check = Callable[[object, str], object]


def _fail(path: str, expected: str) -> ValueError:
    return ValueError(f"{path} must be {expected}.")


def ident(value: object, path: str) -> object:
    if not isinstance(value, str) or not ID.match(value):
        raise _fail(path, "an id of 1-64 characters A-Z a-z 0-9 _ . : -")
    return value


def text(limit: int) -> Check:
    def check(value: object, path: str) -> object:
        if not isinstance(value, str):
            raise _fail(path, "a string")
        if len(value) > limit:
            raise _fail(path, f"at most {limit} characters")
        return value

    return check


def integer(value: object, path: str) -> object:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**53:
        raise _fail(path, "a non-negative integer")
    return value


def number(value: object, path: str) -> object:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(float(value)) or float(value) < 0:  # type: ignore[arg-type]
        raise _fail(path, "a non-negative number")
    return value


def boolean(value: object, path: str) -> object:
    if not isinstance(value, bool):
        raise _fail(path, "true or false")
    return value


def json_object(value: object, path: str) -> object:
    if not isinstance(value, dict):
        raise _fail(path, "a JSON object")
    return value


def one_of(*choices: str) -> Check:
    def check(value: object, path: str) -> object:
        if value not in choices:
            raise _fail(path, " or ".join(repr(c) for c in choices))
        return value

    return check


def nullable(inner: Check) -> Check:
    def check(value: object, path: str) -> object:
        return None if value is None else inner(value, path)

    return check


class Field:
    __slots__ = ("check", "default", "required")

    def __init__(self, check: Check, required: bool = True, default: object = None) -> None:
        self.check = check
        self.required = required
        self.default = default


def opt(check: Check, default: object = None) -> Field:
    return Field(check, required=False, default=default)


Shape = Mapping[str, Field | Check]


def record(shape: Shape) -> Check:
    """An object with exactly these keys: unknown keys are refused, missing optional ones are
    left out (or filled with their default when it is not None)."""

    def check(value: object, path: str) -> object:
        if not isinstance(value, dict):
            raise _fail(path, "a JSON object")
        unknown = set(value) - set(shape)
        if unknown:
            raise ValueError(f"{path} has unknown field(s): {', '.join(sorted(unknown))}.")
        out: dict[str, object] = {}
        for name, spec in shape.items():
            field = spec if isinstance(spec, Field) else Field(spec)
            sub = f"{path}.{name}"
            if name in value:
                out[name] = field.check(value[name], sub)
            elif field.required:
                raise ValueError(f"{sub} is required.")
            elif field.default is not None:
                out[name] = field.default
        return out

    return check


def array(inner: Check, limit: int) -> Check:
    def check(value: object, path: str) -> object:
        if not isinstance(value, list):
            raise _fail(path, "an array")
        if len(value) > limit:
            raise _fail(path, f"at most {limit} items")
        return [inner(item, f"{path}[{i}]") for i, item in enumerate(value)]

    return check


ERROR = record({"type": text(MAX_NAME), "message": text(MAX_TEXT)})
MODEL = record({"id": text(MAX_NAME), "provider_id": text(MAX_NAME)})
TOKENS = record(
    {
        "input": opt(integer),
        "output": opt(integer),
        "reasoning": opt(integer),
        "cache_read": opt(integer),
        "cache_write": opt(integer),
    }
)
TOOL_STATUS = ("streaming", "running", "completed", "error")
TREE = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
MAX_PATH = 4096
MAX_FILES = 100_000


def tree(value: object, path: str) -> object:
    if not isinstance(value, str) or not TREE.match(value):
        raise _fail(path, "a snapshot id (a git tree id)")
    return value


PATHS = array(text(MAX_PATH), MAX_FILES)
# A step's checkpoint: the snapshots before and after it, and the files it changed (the
# first MAX_LISTED of them, `omitted` counts the rest).
CHECKPOINT = record(
    {
        "start": tree,
        "end": tree,
        "files": array(
            record(
                {
                    "path": text(MAX_PATH),
                    "status": one_of("added", "modified", "deleted"),
                    "additions": integer,
                    "deletions": integer,
                }
            ),
            MAX_FILES,
        ),
        "omitted": opt(integer),
    }
)
# A request's context use: prompt tokens, the window when known, the model.
CONTEXT = record({"used": integer, "window": opt(integer), "model": opt(text(MAX_NAME))})


def _tool_input(value: object, path: str) -> object:
    if not isinstance(value, dict | str):
        raise _fail(path, "a JSON object or a string")
    return value


_PARTS: dict[str, Check] = {
    # `partial`: the saved start of a block whose stream never ended (a crash cut it).
    "text": record({"type": text(16), "text": text(MAX_TEXT), "partial": opt(boolean)}),
    "reasoning": record(
        {
            "type": text(16),
            "text": text(MAX_TEXT),
            "partial": opt(boolean),
            "time": opt(record({"created": opt(integer), "completed": opt(integer)})),
        }
    ),
    "tool": record(
        {
            "type": text(16),
            "id": text(MAX_NAME),
            "name": text(MAX_NAME),
            "executed": opt(boolean),
            "state": record(
                {
                    "status": one_of(*TOOL_STATUS),
                    "input": _tool_input,
                    "content": opt(text(MAX_TEXT)),
                    "error": opt(ERROR),
                    "metadata": opt(json_object),
                }
            ),
            "time": record({"created": integer, "ran": opt(integer), "completed": opt(integer)}),
        }
    ),
}


def content_part(value: object, path: str) -> object:
    kind = value.get("type") if isinstance(value, dict) else None
    check = _PARTS.get(kind) if isinstance(kind, str) else None
    if check is None:
        raise ValueError(f"{path}.type must be one of {', '.join(_PARTS)} (got {kind!r}).")
    return check(value, path)


CONTENT = array(content_part, MAX_PARTS)
MESSAGE_ID: Field = Field(ident)

# Durable event types and the data each carries (the session is the event's aggregate).
DURABLE: dict[str, Check] = {
    "session.created": record(
        {
            "title": text(MAX_TITLE),
            "directory": text(MAX_DIRECTORY),
            "parent_id": opt(nullable(ident)),
        }
    ),
    "session.updated": record({"title": text(MAX_TITLE)}),
    "session.deleted": record({}),
    # `from_session`: the parent session whose agent wrote the prompt (a subagent's task).
    "session.prompted": record(
        {
            "message_id": MESSAGE_ID,
            "text": text(MAX_TEXT),
            "mode": one_of("queue", "steer"),
            "from_session": opt(ident),
        }
    ),
    "session.synthetic": record(
        {
            "message_id": MESSAGE_ID,
            "text": text(MAX_TEXT),
            "description": opt(text(MAX_TEXT), ""),
            "metadata": opt(json_object, {}),
        }
    ),
    "session.step.started": record(
        {"message_id": MESSAGE_ID, "agent": text(MAX_NAME), "model": MODEL}
    ),
    "session.step.streamed": record(
        {
            "message_id": MESSAGE_ID,
            "part": opt(one_of("text", "reasoning")),
            "text": opt(text(MAX_TEXT)),
        }
    ),
    "session.step.ended": record(
        {
            "message_id": MESSAGE_ID,
            "finish": text(MAX_NAME),
            "tokens": opt(TOKENS),
            "cost": opt(number),
            "checkpoint": opt(CHECKPOINT),
            "context": opt(CONTEXT),
        }
    ),
    "session.step.failed": record({"message_id": MESSAGE_ID, "error": ERROR}),
    "session.text": record({"message_id": MESSAGE_ID, "text": text(MAX_TEXT)}),
    "session.reasoning": record({"message_id": MESSAGE_ID, "text": text(MAX_TEXT)}),
    "session.tool.input.started": record(
        {"message_id": MESSAGE_ID, "call_id": text(MAX_NAME), "name": text(MAX_NAME)}
    ),
    "session.tool.called": record(
        {
            "message_id": MESSAGE_ID,
            "call_id": text(MAX_NAME),
            "name": text(MAX_NAME),
            "input": json_object,
            "executed": opt(boolean),
        }
    ),
    "session.tool.success": record(
        {
            "message_id": MESSAGE_ID,
            "call_id": text(MAX_NAME),
            "content": text(MAX_TEXT),
            "metadata": opt(json_object),
        }
    ),
    "session.tool.failed": record(
        {
            "message_id": MESSAGE_ID,
            "call_id": text(MAX_NAME),
            "error": ERROR,
            "metadata": opt(json_object),
        }
    ),
    "session.retry.scheduled": record(
        {"message_id": opt(ident), "attempt": integer, "at": integer, "error": ERROR}
    ),
    "session.message.content.updated": record({"message_id": MESSAGE_ID, "content": CONTENT}),
    "session.execution.interrupted": record({"reason": one_of("user", "shutdown")}),
    "session.resume.exhausted": record({"error": ERROR}),
    # The runner's: a queued or steered prompt handed to the model (its message moves to
    # the point of delivery, so history order is the order the model saw).
    "session.input.delivered": record({"message_id": MESSAGE_ID}),
    # The person's: a queued or steered prompt withdrawn before delivery (its message goes).
    "session.input.cancelled": record({"message_id": MESSAGE_ID}),
    # Permissions (desktop/agent/permissions.py): the mode, a call waiting for the
    # person, and the person's answer.
    # Compaction (desktop/agent/compaction.py): what the model sees from now on. Messages
    # up to `through` are replaced by `summary` (when there is one) and the outputs of the
    # `pruned` calls by a placeholder; the person's view keeps every message.
    "session.compacted": record(
        {
            "message_id": MESSAGE_ID,
            "summary": text(MAX_TEXT),
            "through": opt(nullable(ident)),
            "pruned": opt(array(text(MAX_NAME), MAX_PARTS), []),
            "reason": one_of("threshold", "overflow", "manual"),
            "tokens": record({"before": integer, "after": integer}),
        }
    ),
    # The session's own context window (null: back to the model's).
    "session.context.window": record({"window": nullable(integer)}),
    # The session's own model and reasoning effort (null: back to the provider settings').
    "session.model": record(
        {
            "model": opt(nullable(text(256))),  # the provider settings' MAX_MODEL
            "reasoning_effort": opt(nullable(one_of("low", "medium", "high"))),
        }
    ),
    "session.permission.mode": record({"mode": one_of("auto", "ask")}),
    "session.permission.asked": record(
        {
            "message_id": MESSAGE_ID,
            "call_id": text(MAX_NAME),
            "tool": text(MAX_NAME),
            "input": json_object,
            "diff": opt(text(MAX_TEXT)),
            # What "allow for this session" allows (desktop/agent/rules.py derive_pattern).
            "pattern": opt(text(MAX_TEXT)),
        }
    ),
    "session.permission.replied": record(
        {
            "message_id": MESSAGE_ID,
            "call_id": text(MAX_NAME),
            "tool": text(MAX_NAME),
            "reply": one_of("once", "session", "deny"),
        }
    ),
}


def copied_message(value: object, path: str) -> object:
    """A message of another session, as projected, under its new id."""
    if not isinstance(value, dict):
        raise _fail(path, "a JSON object")
    ident(value.get("id"), f"{path}.id")
    one_of("user", "synthetic", "assistant")(value.get("type"), f"{path}.type")
    return value


# Checkpoints (desktop/checkpoints): a revert wrote `restored` from the snapshots (and left
# `conflicts`), `before` and `after` are the directory's snapshots around it; an unrevert
# undid the pending reverts; a fork's new session and each message copied into it.
REVERT_DATA = {
    "before": tree,
    "after": tree,
    "restored": PATHS,
    "conflicts": PATHS,
}
DURABLE.update(
    {
        "session.reverted": record({"message_id": MESSAGE_ID, **REVERT_DATA}),
        "session.unreverted": record(REVERT_DATA),
        "session.forked": record({"session_id": ident, "message_id": nullable(ident)}),
        "session.message.copied": record({"message": copied_message}),
    }
)

# Ephemeral events: broadcast to subscribers only, never stored.
EPHEMERAL: dict[str, Check] = {
    "session.text.delta": record({"message_id": MESSAGE_ID, "delta": text(MAX_TEXT)}),
    "session.reasoning.delta": record({"message_id": MESSAGE_ID, "delta": text(MAX_TEXT)}),
    "session.tool.input.delta": record(
        {"message_id": MESSAGE_ID, "call_id": text(MAX_NAME), "delta": text(MAX_TEXT)}
    ),
    "session.tool.progress": record(
        {"message_id": MESSAGE_ID, "call_id": text(MAX_NAME), "metadata": json_object}
    ),
    # A background job of the session changed (the jobs route's shape): the UI's jobs panel.
    "session.job.updated": record({"job": json_object}),
    # A "Compact now" failed (its summary request's retries included): the 422's error.
    "session.compaction.failed": record({"error": ERROR}),
}


def validate_event(event_type: object, data: object, *, durable: bool = True) -> dict[str, Any]:
    """Normalised event data, or a `request.invalid` SessionError naming the bad field."""
    table = DURABLE if durable else EPHEMERAL
    if not isinstance(event_type, str) or event_type not in table:
        kinds = "durable" if durable else "ephemeral"
        raise invalid(f"Unknown {kinds} event type {event_type!r}; known: {', '.join(table)}.")
    try:
        out = table[event_type](data, "data")
    except ValueError as exc:
        raise invalid(f"{type}: {exc}") from None
    assert isinstance(out, dict)
    return out


def validate_content(value: object) -> list[dict[str, Any]]:
    try:
        out = CONTENT(value, "content")
    except ValueError as exc:
        raise invalid(str(exc)) from None
    assert isinstance(out, list)
    return out
