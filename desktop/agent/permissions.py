"""Permissions: a session's mode (`auto`, the default, or `ask`) and the calls waiting for the
person, all durable in kv (projector `permission_key`) but the futures running calls await.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Mapping
from typing import Any

from desktop.agent.rules import RuleBook, covered
from desktop.events import errors
from desktop.events.bus import DurableBus, draft
from desktop.events.projector import permission_key
from desktop.store import sessions as q

MODES = ("auto", "ask")
REPLIES = ("once", "session", "deny")
GUARDED_TOOLS = frozenset({"shell", "write", "edit", "subagent"})
MAX_ANCESTRY = 64  # a parent chain longer than this (or a cycle) counts as restricted
DENIED = "denied by the user"


def mode_of(conn: sqlite3.Connection, session_id: str) -> str:
    value = q.kv_get(conn, permission_key(session_id, "mode"))
    return value if isinstance(value, str) and value in MODES else "auto"


def lineage(conn: sqlite3.Connection, session_id: str) -> list[str] | None:
    """The session then its ancestors (parent first); None when the chain is broken by a
    cycle or is too long (then the strictest answer applies)."""
    chain = [session_id]
    while len(chain) <= MAX_ANCESTRY:
        found = q.get_session(conn, chain[-1])
        parent = found.get("parent_id") if found is not None else None
        if not isinstance(parent, str) or not parent:
            return chain
        if parent in chain:
            return None
        chain.append(parent)
    return None


def effective_mode(conn: sqlite3.Connection, session_id: str) -> str:
    """`ask` when the session or any ancestor asks: a child is never less restricted."""
    chain = lineage(conn, session_id)
    if chain is None:
        return "ask"
    return "ask" if any(mode_of(conn, sid) == "ask" for sid in chain) else "auto"


def allowed_in(
    conn: sqlite3.Connection, session_id: str, tool: str, subject: str | None = None
) -> bool:
    """The call was allowed for the rest of the session by the session or an ancestor: the
    whole tool, or a pattern ("allow for this session") that covers `subject`."""
    chain = lineage(conn, session_id) or [session_id]
    for sid in chain:
        if q.kv_get(conn, permission_key(sid, "allow", tool)) is True:
            return True
        patterns = q.kv_get(conn, permission_key(sid, "patterns", tool))
        if isinstance(patterns, list) and covered(tool, [str(p) for p in patterns], subject):
            return True
    return False


def pending_of(conn: sqlite3.Connection, session_id: str) -> list[dict[str, Any]]:
    rows = q.kv_prefix(conn, permission_key(session_id, "ask", ""))
    items = [v for v in rows.values() if isinstance(v, dict)]
    return sorted(items, key=lambda v: (v.get("time", {}).get("created", 0), v["call_id"]))


def _same_call(waiting: object, tool: str, args: Mapping[str, Any]) -> bool:
    return (
        isinstance(waiting, dict)
        and waiting.get("tool") == tool
        and waiting.get("input") == dict(args)
    )


class Permissions:
    """All state is durable and projected into kv: the mode, one row per waiting call
    (`session.permission.asked`, removed by `session.permission.replied`) and the tools
    allowed for the rest of the session. After a restart the recovered turn runs a waiting
    call again, finds its request still in kv and awaits a new future, so the question is
    shown again and answered once. A reply is checked inside its own transaction (the
    projection refuses a reply to nothing), so two windows answering at once cannot both win.

    A child session (a subagent's) is never less restricted than its ancestors: at every
    check the mode is `ask` when the session or any ancestor is in `ask`, and a tool is
    allowed for the session when it or an ancestor allowed it, so a later change of the
    parent applies to its children at once. Spawning a subagent is itself asked in `ask`
    mode (its prompt is shown). An approval is bound to the exact call it showed: a waiting
    request whose tool or input differ from the call being checked is never taken as its
    answer.
    """

    def __init__(self, bus: DurableBus, rules: RuleBook | None = None) -> None:
        self.bus = bus
        self.store = bus.store
        self.rules = rules or RuleBook(None)  # the person's rules and the built-in ones
        self._waiting: dict[tuple[str, str], asyncio.Future[str]] = {}

    async def mode(self, session_id: str) -> str:
        return str(await self.store.read(lambda c: mode_of(c, session_id)))

    async def set_mode(self, session_id: str, mode: str) -> None:
        if mode not in MODES:
            raise errors.invalid("permission_mode must be 'auto' or 'ask'.")
        await self.bus.publish(draft(session_id, "session.permission.mode", {"mode": mode}))

    async def pending(self, session_id: str) -> list[dict[str, Any]]:
        return await self.store.read(lambda c: pending_of(c, session_id))

    async def check(
        self,
        session_id: str,
        message_id: str,
        call_id: str,
        tool: str,
        args: Mapping[str, Any],
        diff: str | None = None,
        *,
        rule: str | None = None,
        subject: str | None = None,
        pattern: str | None = None,
    ) -> bool:
        """True when the call may run: an `allow` rule; `auto` mode, an unguarded tool or a
        call the session allowed, unless an `ask` rule matches; or the person's yes, waited
        for durably. `rule` is the permission rules' action, `subject` what session
        allowances match, `pattern` what "allow for this session" would allow (on the card)."""
        if rule == "deny":
            return False
        if tool not in GUARDED_TOOLS and rule != "ask":
            return True

        def state(conn: sqlite3.Connection) -> tuple[str, bool, object]:
            return (
                effective_mode(conn, session_id),
                allowed_in(conn, session_id, tool, subject),
                q.kv_get(conn, permission_key(session_id, "ask", call_id)),
            )

        mode, allowed, waiting = await self.store.read(state)
        asked = waiting is not None
        if asked and not _same_call(waiting, tool, args):
            # A request for this id that showed another call: its answer is not this call's.
            return False
        if not asked and (rule == "allow" or (rule != "ask" and (mode == "auto" or allowed))):
            return True
        key = (session_id, call_id)
        future = self._waiting.get(key)
        if future is None or future.done():
            future = asyncio.get_running_loop().create_future()
            self._waiting[key] = future
        if not asked:
            data: dict[str, Any] = {
                "message_id": message_id,
                "call_id": call_id,
                "tool": tool,
                "input": dict(args),
            }
            if diff is not None:
                data["diff"] = diff
            if pattern is not None:
                data["pattern"] = pattern
            await self.bus.publish(draft(session_id, "session.permission.asked", data))
        try:
            reply = await future
        finally:
            self._waiting.pop(key, None)
        return reply != "deny"

    async def reply(self, session_id: str, call_id: str, reply: str) -> dict[str, Any]:
        """Record the person's answer and wake the waiting call; the answered request."""
        if reply not in REPLIES:
            raise errors.invalid("reply must be 'once', 'session' or 'deny'.")
        key = permission_key(session_id, "ask", call_id)
        found = await self.store.read(lambda c: q.kv_get(c, key))
        if not isinstance(found, dict):
            raise errors.SessionError(
                404,
                "session.permission_not_found",
                f"No permission request for call {call_id!r} is waiting.",
            )
        data = {
            "message_id": found["message_id"],
            "call_id": call_id,
            "tool": found["tool"],
            "reply": reply,
        }
        await self.bus.publish(draft(session_id, "session.permission.replied", data))
        future = self._waiting.get((session_id, call_id))
        if future is not None and not future.done():
            future.set_result(reply)
        return {**found, "reply": reply}
