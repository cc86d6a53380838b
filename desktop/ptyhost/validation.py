"""The rules for what a client may ask of the PTY host, written once for both sides: the
limits, and the parsers of requests and client messages.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TypeGuard

from desktop.ptyhost.protocol import PtyHostError
from desktop.values import strict_int

MAX_DIMENSION = 1000
DEFAULT_COLS = 80
DEFAULT_ROWS = 24
MAX_TITLE = 1024
MAX_GROUP = 256
MAX_PATH = 4096
ATTACHMENT_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
ATTACHMENT_ID_RULE = "`attachment_id` must be 1-128 letters, digits, '_', '-', '.' or ':'."
# A cursor in a query string: an output offset (u64) in decimal.
_CURSOR_TEXT = re.compile(r"^[0-9]{1,19}$")
# A job's key names the session and the tool call it runs for: `job:<session>:<call>`.
# Session ids and call ids are both 1-128 of letters, digits, '_', '-' and '.' (no ':', so
# the key splits one way only). Both sides check keys with JOB_KEY; job_key builds them.
JOB_PART = r"[A-Za-z0-9_.-]{1,128}"
JOB_KEY = re.compile(rf"^job:(?P<session>{JOB_PART}):(?P<call>{JOB_PART})$")
JOB_KEY_RULE = (
    "`key` must be 'job:<session id>:<call id>', each id 1-128 letters, digits, '_', '-' or '.'."
)
# The error type of a key the host does not know (it never had it, removed it, or is a new
# host since): for the service, that job is gone.
JOB_NOT_FOUND = "job.not_found"
Role = Literal["controller", "observer"]
ROLES: tuple[Role, ...] = ("controller", "observer")


def invalid(message: str) -> PtyHostError:
    return PtyHostError("request.invalid", message, 400)


def optional_str(params: Mapping[str, object], name: str, limit: int) -> str | None:
    value = params.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise invalid(f"`{name}` must be a string.")
    if len(value) > limit:
        raise invalid(f"`{name}` is longer than {limit} characters.")
    if "\0" in value:
        raise invalid(f"`{name}` must not contain NUL characters.")
    return value


def is_dimension(value: object) -> TypeGuard[int]:
    """A terminal width or height: an integer from 1 to MAX_DIMENSION."""
    return strict_int(value) and 1 <= value <= MAX_DIMENSION


def dimension(value: object, name: str) -> int:
    if not strict_int(value):
        raise invalid(f"`size.{name}` must be an integer from 1 to {MAX_DIMENSION}.")
    if not is_dimension(value):
        raise invalid(f"`size.{name}` must be from 1 to {MAX_DIMENSION}, got {value}.")
    return value


def parse_size(value: object) -> tuple[int, int]:
    if not isinstance(value, dict):
        raise invalid("`size` must be an object {cols, rows}.")
    return dimension(value.get("cols"), "cols"), dimension(value.get("rows"), "rows")


def parse_attachment_id(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not ATTACHMENT_ID.match(value):
        raise invalid(ATTACHMENT_ID_RULE)
    return value


def parse_job_key(value: object) -> tuple[str, str, str]:
    """(key, session id, call id) of a valid job key; request.invalid otherwise."""
    match = JOB_KEY.match(value) if isinstance(value, str) else None
    if match is None:
        raise invalid(JOB_KEY_RULE)
    return match.group(0), match.group("session"), match.group("call")


def parse_job_session(value: object) -> str:
    """A session id as jobs name it (the middle of their keys); request.invalid otherwise."""
    if not isinstance(value, str) or JOB_KEY.match(f"job:{value}:x") is None:
        raise invalid("`session` must be 1-128 letters, digits, '_', '-' or '.'.")
    return value


def job_key(session_id: str, call_id: str) -> str:
    """The key of the job a tool call runs; request.invalid when an id breaks the rule."""
    return parse_job_key(f"job:{session_id}:{call_id}")[0]


# ----- attaching ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AttachRequest:
    """What an attachment asks for: where to replay from, which role, whose epoch."""

    cursor: int | None = None
    role: Role = "controller"
    takeover: bool = False
    epoch: str | None = None
    attachment_id: str | None = None


def parse_attach(params: Mapping[str, object]) -> AttachRequest:
    """The host's check of the attach parameters of a handoff (JSON values)."""
    cursor = params.get("cursor")
    if cursor is not None and not (strict_int(cursor) and cursor >= 0):
        raise invalid("`cursor` must be a non-negative integer.")
    role = params.get("role", "controller")
    if role not in ROLES:
        raise invalid("`role` must be 'controller' or 'observer'.")
    takeover = params.get("takeover", False)
    if not isinstance(takeover, bool):
        raise invalid("`takeover` must be a boolean.")
    epoch = params.get("epoch")
    if epoch is not None and not isinstance(epoch, str):
        raise invalid("`epoch` must be a string.")
    return AttachRequest(
        cursor=cursor,
        role="controller" if role == "controller" else "observer",
        takeover=takeover,
        epoch=epoch,
        attachment_id=parse_attachment_id(params.get("attachment_id")),
    )


def parse_attach_query(query: Mapping[str, str]) -> AttachRequest:
    """The service's check of the WebSocket query (strings; empty means absent)."""
    raw_cursor = query.get("cursor") or None
    if raw_cursor is not None and not _CURSOR_TEXT.match(raw_cursor):
        raise invalid(f"`cursor` must be a non-negative integer, got {raw_cursor!r}.")
    takeover = query.get("takeover", "false")
    if takeover not in ("true", "false"):
        raise invalid("`takeover` must be 'true' or 'false'.")
    return parse_attach(
        {
            "cursor": int(raw_cursor) if raw_cursor is not None else None,
            "role": query.get("role", "controller"),
            "takeover": takeover == "true",
            "epoch": query.get("epoch") or None,
            "attachment_id": query.get("attachment_id") or None,
        }
    )


# ----- messages of an attached client -----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Ack:
    """The client consumed `count` bytes of binary output (flow control)."""

    count: int

    def to_json(self) -> dict[str, object]:
        return {"type": "ack", "bytes": self.count}


@dataclass(frozen=True, slots=True)
class Resize:
    cols: int
    rows: int

    def to_json(self) -> dict[str, object]:
        return {"type": "resize", "cols": self.cols, "rows": self.rows}


ClientMessage = Ack | Resize
NOT_AN_OBJECT = "Text frames must be JSON objects: {type: 'ack'|'resize', ...}."


def parse_client_message(value: object) -> ClientMessage:
    """A client's text message (decoded JSON); PtyHostError says what is wrong with it."""
    if not isinstance(value, dict):
        raise invalid(NOT_AN_OBJECT)
    kind = value.get("type")
    if kind == "ack":
        count = value.get("bytes")
        if not (strict_int(count) and count >= 0):
            raise invalid("An ack needs `bytes`: a non-negative integer.")
        return Ack(count)
    if kind == "resize":
        cols, rows = value.get("cols"), value.get("rows")
        if not (is_dimension(cols) and is_dimension(rows)):
            raise invalid(f"A resize needs `cols` and `rows`: integers from 1 to {MAX_DIMENSION}.")
        return Resize(cols, rows)
    raise invalid(f"Unknown message type {kind!r}: expected 'ack' or 'resize'.")


def parse_client_text(text: str) -> ClientMessage:
    """`parse_client_message` of a WebSocket text frame."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than Python goes
        raise invalid(NOT_AN_OBJECT) from None
    return parse_client_message(value)
