"""Notices: how settled background work reaches its session, exactly once."""

from __future__ import annotations

import html
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from desktop.events.bus import DurableBus, draft
from desktop.events.errors import SessionError
from desktop.jobs import model
from desktop.jobs.model import Job
from desktop.store import log
from desktop.store import sessions as q
from desktop.tools.output import OUTPUT_BUDGET, clean_output
from desktop.tools.shell import JobResult, result_text

SERVER_RESTARTED = "Command cancelled because the server restarted"
COMMAND_COMPLETED = "Command completed"
COMMAND_FAILED = "Command failed"
COMMAND_CANCELLED = "Command cancelled"
SUBAGENT_NO_TEXT = "Subagent completed without a text response."
SUBAGENT_FAILED = "Subagent failed"
SUBAGENT_CANCELLED = "Subagent cancelled"

Admission = Literal["admitted", "duplicate", "gone"]
State = Literal["completed", "error", "cancelled"]


@dataclass(frozen=True, slots=True)
class Notice:
    session_id: str
    message_id: str
    text: str
    description: str
    metadata: Mapping[str, Any] = field(default_factory=dict)


def _attr(value: str) -> str:
    return html.escape(value, quote=True)


def _body(text: str) -> str:
    # Shell output is already cleaned to the budget; a subagent's answer is capped here.
    return clean_output(text, OUTPUT_BUDGET).text


def shell_notice(
    job: Job,
    state: State,
    body: str,
    *,
    metadata: Mapping[str, Any] | None = None,
) -> Notice:
    r = job.recovery
    assert isinstance(r, model.ShellRecovery)
    assert job.notification_id is not None
    text = (
        f'<shell id="{_attr(job.id)}" state="{state}" command="{_attr(r.command)}">\n'
        f"{_body(body)}\n</shell>"
    )
    return Notice(
        r.session_id,
        job.notification_id,
        text,
        r.command[:1000],
        {
            "source": "shell",
            "job_id": job.id,
            "job_key": r.job_key,
            "call_id": r.call_id,
            "state": state,
            **(metadata or {}),
        },
    )


def stored_shell_notice(job: Job) -> Notice:
    """The notice of a shell job from what its row stored alone (its job is gone): a job
    still `running` lost its work to the restart."""
    if job.status == "running":
        return shell_notice(job, "cancelled", SERVER_RESTARTED, metadata={"restarted": True})
    if job.status == "completed":
        return shell_notice(job, "completed", job.output or COMMAND_COMPLETED)
    if job.status == "error":
        return shell_notice(job, "error", job.error or COMMAND_FAILED)
    return shell_notice(job, "cancelled", COMMAND_CANCELLED)


def shell_result_notice(job: Job, result: JobResult) -> Notice:
    """The notice of a shell job from the PTY host's result of it."""
    state: State = "completed" if result.exit_code == 0 else "error"
    meta: dict[str, object] = {"exit_code": result.exit_code, "truncated": result.truncated}
    if result.reason is not None:
        meta["reason"] = result.reason
    return shell_notice(job, state, result_text(result, None), metadata=meta)


def settled_shell_notice(job: Job, result: JobResult | None) -> Notice:
    """The notice of a settled shell job: its real result when it completed with one."""
    if job.status == "completed" and result is not None:
        return shell_result_notice(job, result)
    return stored_shell_notice(job)


def subagent_state(status: str) -> State:
    return "completed" if status == "completed" else "error" if status == "error" else "cancelled"


def subagent_notice(job: Job, state: State, body: str | None = None) -> Notice:
    r = job.recovery
    assert isinstance(r, model.SubagentRecovery)
    assert job.notification_id is not None
    if body is None:
        body = {
            "completed": job.output or SUBAGENT_NO_TEXT,
            "error": job.error or SUBAGENT_FAILED,
            "cancelled": SUBAGENT_CANCELLED,
        }[state]
    text = (
        f'<subagent sessionID="{_attr(r.child_id)}" state="{state}" '
        f'description="{_attr(r.description)}">\n{_body(body)}\n</subagent>'
    )
    return Notice(
        r.parent_id,
        job.notification_id,
        text,
        r.description[:1000],
        {"source": "subagent", "child_id": r.child_id, "agent": r.agent, "state": state},
    )


async def admit(
    bus: DurableBus,
    notice: Notice,
    *,
    wake: Callable[[str], None] | None = None,
    settles: Job | None = None,
) -> Admission:
    """Admit `notice` and acknowledge its job's row in one transaction; `wake` (the
    runner's) is called after an admission that should start a turn (whose claim the
    transaction takes). "duplicate": it was admitted before (the row is acknowledged now);
    "gone": its session no longer exists. `settles` is a job row left `running` by an earlier
    process: it ends in the notice's state in the same transaction.
    """
    created = log.now_ms()
    data = {
        "message_id": notice.message_id,
        "text": notice.text,
        "description": notice.description,
        "metadata": dict(notice.metadata),
    }

    def commit(conn: sqlite3.Connection) -> None:
        q.inbox_add(
            conn,
            inbox_id=notice.message_id,
            session_id=notice.session_id,
            mode="steer",
            kind="synthetic",
            data={k: data[k] for k in ("text", "description", "metadata")},
            created=created,
        )
        if settles is not None and settles.status == "running":
            state = notice.metadata.get("state")
            ended: model.Status = state if state in model.STATUSES else "cancelled"
            model.write(conn, [settles.settled(ended, settles.output, settles.error)])
        model.acknowledge(conn, notice.message_id)
        if wake is not None:
            q.claim(conn, notice.session_id, created)  # busy from now: a turn is owed

    try:
        await bus.publish(
            draft(notice.session_id, "session.synthetic", data, created=created), commit=commit
        )
    except SessionError as exc:
        outcome: Admission
        if exc.type == "session.message_exists":
            outcome = "duplicate"
        elif exc.type == "session.not_found":
            outcome = "gone"
        else:
            raise
        await model.JobStore(bus.store).acknowledge(notice.message_id)
        return outcome
    if wake is not None:
        wake(notice.session_id)
    return "admitted"
