"""Running one step's tool calls: announced in one batch, then run concurrently, each ending
in one durable result the model can read."""

from __future__ import annotations

import asyncio
import difflib
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.agent.permissions import DENIED, Permissions
from desktop.agent.rules import decide, derive_pattern, hidden_for, subject_of
from desktop.events.bus import DurableBus, draft
from desktop.events.schema import MAX_TEXT
from desktop.tools.base import Tool, ToolError, ToolResult, parse_arguments, run_tool
from desktop.tools.shell import ShellContext

log = logging.getLogger("desk.session.tools")


@dataclass(frozen=True)
class PendingCall:
    message_id: str
    call_id: str
    name: str
    arguments: str | Mapping[str, Any]  # raw model text, or the stored input when adopted


@dataclass
class TurnFlags:
    """Per turn: `interrupted` is set by a user interrupt before the task is cancelled, so
    tools (shell) can tell an interrupt from a service shutdown."""

    interrupted: asyncio.Event = field(default_factory=asyncio.Event)


def input_object(arguments: str | Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The call's input as stored (always an object) and why it is unusable, if it is."""
    if not isinstance(arguments, str):
        return dict(arguments), None
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError as exc:
        return {}, f"the arguments are not valid JSON ({exc}); send one JSON object"
    if not isinstance(value, dict):
        return {}, "the arguments must be a JSON object"
    return value, None


def _diff(name: str, args: Mapping[str, Any]) -> str | None:
    """What the person is shown for a write or an edit."""
    if name == "edit":
        # The edit tool's arguments are `old` and `new` (desktop/tools/files.py).
        # One line each, so a snippet without a final newline does not run into the next.
        old = str(args.get("old", "")).splitlines()
        new = str(args.get("new", "")).splitlines()
        path = str(args.get("path", ""))
        lines = difflib.unified_diff(old, new, f"a/{path}", f"b/{path}", lineterm="")
        return "\n".join(lines)[:MAX_TEXT]
    if name == "write":
        return str(args.get("content", ""))[:MAX_TEXT]
    return None


def _clip(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 40] + "\n[... output cut ...]"


class ToolRunner:
    def __init__(
        self,
        bus: DurableBus,
        tools: Mapping[str, Tool],
        permissions: Permissions,
        *,
        private: tuple[Path, ...] = (),
    ) -> None:
        self.bus = bus
        self.tools = dict(tools)
        self.permissions = permissions
        self.private = private  # Desk's own dirs: out of every tool's reach

    def specs(self) -> list[dict[str, Any]]:
        return [self.tools[name].spec() for name in sorted(self.tools)]

    async def announce(self, session_id: str, calls: Sequence[PendingCall]) -> None:
        drafts = []
        for call in calls:
            value, problem = input_object(call.arguments)
            data: dict[str, Any] = {
                "message_id": call.message_id,
                "call_id": call.call_id,
                "name": call.name,
                "input": value,
            }
            if problem is not None or call.name not in self.tools:
                data["executed"] = False
            drafts.append(draft(session_id, "session.tool.called", data))
        if drafts:
            await self.bus.publish(drafts)

    async def run(
        self,
        session_id: str,
        directory: str,
        calls: Sequence[PendingCall],
        flags: TurnFlags,
    ) -> None:
        """Run announced calls concurrently; returns when every one is paired."""
        await asyncio.gather(*(self._one(session_id, directory, c, flags) for c in calls))

    async def _one(
        self, session_id: str, directory: str, call: PendingCall, flags: TurnFlags
    ) -> None:
        result = await self._result(session_id, directory, call, flags)
        base = {"message_id": call.message_id, "call_id": call.call_id}
        metadata = dict(result.metadata)
        if result.error:
            kind = str(metadata.pop("error_type", "tool.error"))
            data: dict[str, Any] = {
                **base,
                "error": {"type": kind, "message": _clip(result.output)},
            }
            if metadata:
                data["metadata"] = metadata
            await self.bus.publish(draft(session_id, "session.tool.failed", data))
        else:
            data = {**base, "content": _clip(result.output)}
            if metadata:
                data["metadata"] = metadata
            await self.bus.publish(draft(session_id, "session.tool.success", data))

    async def _result(
        self, session_id: str, directory: str, call: PendingCall, flags: TurnFlags
    ) -> ToolResult:
        tool = self.tools.get(call.name)
        if tool is None:
            known = ", ".join(sorted(self.tools))
            return ToolResult(
                f"Unknown tool {call.name!r}; the tools are: {known}.",
                error=True,
                metadata={"error_type": "tool.unknown"},
            )
        value, problem = input_object(call.arguments)
        if problem is None:
            try:
                args = parse_arguments(tool, value)
            except ToolError as exc:
                problem = str(exc)
        if problem is not None:
            return ToolResult(
                f"Invalid arguments for {call.name}: {problem}",
                error=True,
                metadata={"error_type": "tool.invalid_arguments"},
            )
        rules = await asyncio.to_thread(self.permissions.rules.rules)
        subject = subject_of(call.name, args, directory)
        rule = decide(rules, call.name, subject)
        if rule is not None and rule.action == "deny":
            kind = "a built-in rule" if rule.builtin else "the person's rule"
            return ToolResult(
                f"The {call.name} call was denied by {kind} ({rule.tool} {rule.pattern!r}: "
                "deny); do not try to reach it another way.",
                error=True,
                metadata={"error_type": "permission.denied"},
            )
        allowed = await self.permissions.check(
            session_id,
            call.message_id,
            call.call_id,
            call.name,
            args,
            _diff(call.name, args),
            rule=None if rule is None else rule.action,
            subject=subject,
            pattern=derive_pattern(call.name, subject),
        )
        if not allowed:
            return ToolResult(
                f"The {call.name} call was {DENIED}.",
                error=True,
                metadata={"error_type": "permission.denied"},
            )
        ctx = ShellContext(
            root=Path(directory),
            private=self.private,
            hidden=hidden_for(rules, call.name),
            session_id=session_id,
            call_id=call.call_id,
            interrupted=flags.interrupted,
        )
        try:
            return await run_tool(tool, args, ctx)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug in a tool: the model still gets its answer
            log.exception("tool %s crashed", call.name)
            return ToolResult(
                f"{call.name} failed unexpectedly: {exc.__class__.__name__}: {exc}",
                error=True,
                metadata={"error_type": "tool.crashed"},
            )
