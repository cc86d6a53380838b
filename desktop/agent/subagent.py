"""`subagent`: a child session runs its own turn; its last answer is the result."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable
from typing import Any

from desktop.agent.permissions import lineage
from desktop.events import history
from desktop.store import sessions as q
from desktop.store.db import Store
from desktop.tools.base import Tool, ToolContext, ToolError, ToolResult, arguments
from desktop.tools.shell import ShellContext

CreateChild = Callable[[str, str, str], Awaitable[str]]  # parent, title, directory -> child id
Prompt = Callable[[str, str, str], Awaitable[str]]  # child, task, parent -> message id
# Told when a call goes to the background (desktop.jobs.service): the
# parent's context, the child session, its description.
OnBackground = Callable[[ShellContext, str, str], Awaitable[None]]
# Waits for a foreground call's child in a way the person can move to the background
# (POST /api/session/{id}/background); True when it was moved (its answer becomes a notice).
OnForeground = Callable[[ShellContext, str, str], Awaitable[bool]]

MAX_DEPTH = 1  # how deep subagents nest: a session this deep is not offered the tool


def depth_of(conn: sqlite3.Connection, session_id: str) -> int:
    """How many ancestors the session has (a broken chain counts as too deep)."""
    chain = lineage(conn, session_id)
    return MAX_DEPTH if chain is None else len(chain) - 1


def offers_subagent(conn: sqlite3.Connection, session_id: str) -> bool:
    return depth_of(conn, session_id) < MAX_DEPTH


class SubagentTool(Tool):
    """The child is an ordinary session with `parent_id`, so its whole work is visible and
    replayable like any other. Interrupting the parent interrupts the child (the tool's task is
    cancelled with the turn's interrupt flag set); a service shutdown only stops waiting, and
    the restart settles the parent's call (background subagents that survive a restart are the
    background-jobs module's). With `on_foreground`, the wait is a job the person can move to
    the background: the call then returns at once and the child's answer arrives as a notice.

    Children are limited in depth (`MAX_DEPTH`, default 1: a child is not offered `subagent`,
    and a call from one is refused), and a child can be continued: `session_id` names one of
    the calling session's children, which gets the new prompt on top of its own history.
    """

    name = "subagent"
    description = (
        "Hand a self-contained task to a helper agent working in a child session with the "
        "same tools and folder. It starts with no memory of this conversation: say everything "
        "it needs in `prompt`. Returns the helper's final answer and its session id; pass "
        "that id as `session_id` to give the same helper a follow-up (it keeps its history)."
    )
    parameters = arguments(
        ["description", "prompt"],
        description={"type": "string", "minLength": 1, "description": "3-5 words"},
        prompt={"type": "string", "minLength": 1, "description": "The task in full"},
        background={
            "type": "boolean",
            "description": "Return at once; the helper's answer arrives later",
        },
        session_id={
            "type": "string",
            "minLength": 1,
            "description": "Continue this earlier helper (its session id) instead of a new one",
        },
    )

    def __init__(
        self,
        store: Store,
        create_child: CreateChild,
        prompt: Prompt,
        wait_idle: Callable[[str], Awaitable[None]],
        interrupt: Callable[[str], Awaitable[bool]],
        on_background: OnBackground | None = None,
        on_foreground: OnForeground | None = None,
    ) -> None:
        self.store = store
        self.create_child = create_child
        self.prompt = prompt
        self.wait_idle = wait_idle
        self.interrupt = interrupt
        self.on_background = on_background
        self.on_foreground = on_foreground

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if not isinstance(ctx, ShellContext) or not ctx.session_id:
            raise TypeError("subagent needs the calling session")
        description = str(args["description"])[:200]
        parent = ctx.session_id
        existing = args.get("session_id")

        def check(conn: sqlite3.Connection) -> str | None:
            if not offers_subagent(conn, parent):
                return (
                    f"helpers cannot start helpers (subagents nest at most {MAX_DEPTH} deep); "
                    "do the work yourself"
                )
            if existing is None:
                return None
            found = q.get_session(conn, str(existing))
            if found is None or found.get("parent_id") != parent:
                return f"{existing} is not a helper of this session; leave session_id out"
            return None

        problem = await self.store.read(check)
        if problem is not None:
            raise ToolError(problem)
        if existing is None:
            child = await self.create_child(parent, description, str(ctx.root))
        else:
            child = str(existing)
        await self.prompt(child, str(args["prompt"]), parent)
        if args.get("background") and self.on_background is not None:
            await self.on_background(ctx, child, description)
            return ToolResult(
                f"Started in the background as session {child}; its answer arrives when it ends.",
                metadata={"session_id": child, "background": True},
            )
        try:
            if self.on_foreground is not None and await self.on_foreground(ctx, child, description):
                return ToolResult(
                    f"Moved to the background as session {child}; its answer arrives when it ends.",
                    metadata={"session_id": child, "background": True},
                )
            # Not moved (or no background work): the child ran to its end, or the service
            # is stopping; either way its own task says when it is idle.
            await self.wait_idle(child)
        except asyncio.CancelledError:
            if ctx.interrupted is not None and ctx.interrupted.is_set():
                await asyncio.shield(self.interrupt(child))
            raise

        def read(conn: sqlite3.Connection) -> tuple[str, str | None]:
            snap = history.read(conn, child)
            if snap is None:
                return "", "the child session was deleted"
            last = snap.messages[-1] if snap.messages else {}
            error = last.get("error") if isinstance(last, dict) else None
            message = error.get("message") if isinstance(error, dict) else None
            return history.last_assistant_text(snap.messages), message

        text, error = await self.store.read(read)
        meta = {"session_id": child}
        if error and not text:
            raise ToolError(f"the subagent failed: {error} (session_id {child})")
        answer = text or "(the subagent gave no answer)"
        return ToolResult(f"{answer}\n\n(helper session_id: {child})", metadata=meta)
