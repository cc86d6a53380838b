"""Restart recovery: what a new service does, before it serves, with turns a previous
process left claimed.

    await recover(bus, runner)        # from the app's startup, after the bus started

For each top-level session whose claim is set: count the resume durably (over the budget
the session gets `session.resume.exhausted`, which releases the claim, and is left
alone), then hand it to the runner, whose turn settles first (desktop.agent.settle:
foreground shell jobs still in the PTY host adopted, other open parts settled as
interrupted, the restart notice only when work was lost) and then continues. Claims of
child sessions are released: a foreground subagent's parent call is settled with its
parent. This is the entry point the background-jobs recovery extends (markers, subagent
resumption) — `recover_claims` stays the last phase.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from typing import Any, Protocol

from desktop.agent.runner import SessionRunner
from desktop.events.bus import DurableBus, draft
from desktop.store import sessions as q

log = logging.getLogger("desk.session.recovery")

RESUME_BUDGET = 10


class Resumer(Protocol):
    def active(self) -> set[str]: ...
    def resume(self, session_id: str) -> None: ...


class BackgroundPhase(Protocol):
    """desktop.jobs.recovery.BackgroundRecovery: markers first, then it
    calls `recover_claims` itself with the children it keeps."""

    async def recover(self) -> Any: ...


async def recover(
    bus: DurableBus,
    runner: SessionRunner,
    *,
    budget: int = RESUME_BUDGET,
    background: BackgroundPhase | None = None,
) -> list[str]:
    """Resume every claimed root session; the ids handed to the runner."""
    if background is not None:
        return list((await background.recover()).resumed)
    return await recover_claims(bus, runner, budget=budget)


async def recover_claims(
    bus: DurableBus, runner: Resumer, *, budget: int, keep_children: Sequence[str] = ()
) -> list[str]:
    """Root claims, each counted durably before its resume; child claims are released
    except `keep_children` (children a background marker resumes). Sessions already
    running here keep their claim and are not resumed again."""
    active = runner.active()

    def claimed(conn: sqlite3.Connection) -> list[tuple[str, int | None]]:
        q.release_child_claims(conn, list(keep_children))
        return [
            (sid, q.count_resume(conn, sid)) for sid in q.list_suspended(conn) if sid not in active
        ]

    store = bus.store
    sessions = await store.run(lambda: claimed(store.connection()))
    resumed: list[str] = []
    for session_id, attempts in sessions:
        if attempts is None:
            continue
        if attempts > budget:
            log.warning("session %s was resumed %d times; giving up", session_id, attempts - 1)
            error = {
                "type": "session.resume_exhausted",
                "message": f"The turn was resumed after {budget} restarts and is stopped.",
            }
            await bus.publish(draft(session_id, "session.resume.exhausted", {"error": error}))
            continue
        runner.resume(session_id)
        resumed.append(session_id)
    return resumed
