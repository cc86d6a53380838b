"""Permissions: a session's mode (`auto`, the default, or `ask`) and the calls waiting for
the person.

All state is durable and projected into kv (see projector `permission_key`): the mode, one
row per waiting call (`session.permission.asked`, removed by `session.permission.replied`)
and the tools allowed for the rest of the session. The only in-memory state is the future
a running call awaits; after a restart the recovered turn runs the call again, finds its
request still waiting in kv and awaits a new future, so the question is shown again and
answered once. A reply is checked inside its own transaction (the projection refuses a
reply to nothing), so two windows answering at once cannot both win.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Mapping
from typing import Any

from desktop.events import errors
from desktop.events.bus import DurableBus, draft
from desktop.events.projector import permission_key
from desktop.store import sessions as q

MODES = ("auto", "ask")
REPLIES = ("once", "session", "deny")
GUARDED_TOOLS = frozenset({"shell", "write", "edit"})
DENIED = "denied by the user"


def mode_of(conn: sqlite3.Connection, session_id: str) -> str:
    value = q.kv_get(conn, permission_key(session_id, "mode"))
    return value if isinstance(value, str) and value in MODES else "auto"


def pending_of(conn: sqlite3.Connection, session_id: str) -> list[dict[str, Any]]:
    rows = q.kv_prefix(conn, permission_key(session_id, "ask", ""))
    items = [v for v in rows.values() if isinstance(v, dict)]
    return sorted(items, key=lambda v: (v.get("time", {}).get("created", 0), v["call_id"]))


class Permissions:
    def __init__(self, bus: DurableBus) -> None:
        self.bus = bus
        self.store = bus.store
        self._waiting: dict[tuple[str, str], asyncio.Future[str]] = {}

    async def _read(self, fn: Any) -> Any:
        return await self.store.run(lambda: fn(self.store.connection()))

    async def mode(self, session_id: str) -> str:
        return str(await self._read(lambda c: mode_of(c, session_id)))

    async def set_mode(self, session_id: str, mode: str) -> None:
        if mode not in MODES:
            raise errors.invalid("permission_mode must be 'auto' or 'ask'.")
        await self.bus.publish(draft(session_id, "session.permission.mode", {"mode": mode}))

    async def pending(self, session_id: str) -> list[dict[str, Any]]:
        return await self._read(lambda c: pending_of(c, session_id))  # type: ignore[no-any-return]

    async def check(
        self,
        session_id: str,
        message_id: str,
        call_id: str,
        tool: str,
        args: Mapping[str, Any],
        diff: str | None = None,
    ) -> bool:
        """True when the call may run: `auto` mode, an unguarded tool, a tool allowed for
        the session, or the person's yes. Waits (durably) for the answer in `ask` mode."""
        if tool not in GUARDED_TOOLS:
            return True

        def state(conn: sqlite3.Connection) -> tuple[str, bool, bool]:
            return (
                mode_of(conn, session_id),
                q.kv_get(conn, permission_key(session_id, "allow", tool)) is True,
                q.kv_get(conn, permission_key(session_id, "ask", call_id)) is not None,
            )

        mode, allowed, asked = await self._read(state)
        if (mode == "auto" or allowed) and not asked:
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
        found = await self._read(lambda c: q.kv_get(c, key))
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
