"""Settling what a turn left open, before any request is built (docs/PROVIDER-RULES.md)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from desktop.agent.lowering import INTERRUPTED
from desktop.agent.tools_exec import PendingCall
from desktop.events.bus import Draft, DurableBus, draft
from desktop.events.history import open_tool_parts
from desktop.events.projector import permission_key
from desktop.store import sessions as q
from desktop.tools.shell import JobState

CANCELLED = "Tool execution cancelled by the user: {name}"
RESTART_NOTICE = (
    "The server restarted while you were working. Continue from where you left off "
    "without repeating completed work."
)


class JobFinder(Protocol):
    async def find_job(self, session_id: str, call_id: str) -> JobState: ...


@dataclass
class Settled:
    adopt: list[PendingCall] = field(default_factory=list)
    lost: bool = False  # work was settled as interrupted (not merely cancelled)
    settled: int = 0


async def settle(
    bus: DurableBus,
    session_id: str,
    messages: Sequence[dict[str, Any]],
    jobs: JobFinder | None,
    *,
    cancelled: bool = False,
) -> Settled:
    """Runs before every drain. Every tool part still `streaming` or `running` belongs to work
    that no task of this process runs (turns never overlap), so it is either

    - still alive elsewhere and adoptable: a `shell` call whose job the PTY host still has
      (running: the successor waits for it; finished: its real result is recorded), or a call
      waiting for the person's permission (the question is shown again); these are returned to
      be run again, which adopts them instead of starting anything twice; or
    - gone: settled durably as an error, `aborted` / "Tool execution interrupted: <name>"
      (`cancelled` after a user interrupt), keeping the part's metadata; and `lost` says work
      was lost, which is what makes the runner add the restart notice.

    Assistant messages left without an end (a step cut by a crash) are ended too, so the UI
    shows no message as still streaming.
    """

    out = Settled()
    parts = open_tool_parts(list(messages))
    if not parts and not _open_messages(messages, set()):
        return out
    asked = await bus.store.run(lambda: _asked(bus.store.connection(), session_id))
    drafts: list[Draft] = []
    for message_id, part in parts:
        name = str(part.get("name") or "tool")
        state = part["state"]
        running = not cancelled and state["status"] == "running"
        if running and (
            part["id"] in asked or await _job_alive(jobs, session_id, name, part["id"])
        ):
            out.adopt.append(PendingCall(message_id, part["id"], name, state["input"]))
            continue
        kind, text = ("cancelled", CANCELLED) if cancelled else ("aborted", INTERRUPTED)
        data: dict[str, Any] = {
            "message_id": message_id,
            "call_id": part["id"],
            "error": {"type": kind, "message": text.format(name=name)},
        }
        if isinstance(state.get("metadata"), dict):
            data["metadata"] = state["metadata"]
        drafts.append(draft(session_id, "session.tool.failed", data))
        out.lost = out.lost or not cancelled
        out.settled += 1
    keep = {call.message_id for call in out.adopt}
    finish = "interrupted" if cancelled else "aborted"
    for message_id in _open_messages(messages, keep):
        drafts.append(
            draft(session_id, "session.step.ended", {"message_id": message_id, "finish": finish})
        )
    if drafts:
        await bus.publish(drafts)
    return out


def _asked(conn: sqlite3.Connection, session_id: str) -> set[str]:
    rows = q.kv_prefix(conn, permission_key(session_id, "ask", ""))
    return {str(v["call_id"]) for v in rows.values() if isinstance(v, dict)}


async def _job_alive(jobs: JobFinder | None, session_id: str, name: str, call_id: str) -> bool:
    if jobs is None or name != "shell":
        return False
    try:
        state = await jobs.find_job(session_id, call_id)
    except Exception:  # the host cannot be reached: the job is as good as gone
        return False
    return state.status in ("running", "exited")


def _open_messages(messages: Sequence[dict[str, Any]], keep: set[str]) -> list[str]:
    return [
        m["id"]
        for m in messages
        if m.get("type") == "assistant"
        and "completed" not in m.get("time", {})
        and m["id"] not in keep
    ]
