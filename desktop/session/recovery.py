"""Restart recovery: what a new service does, before it serves, with turns a previous
process left claimed.

    await recover(bus, runner)        # from the app's startup, after the bus started

For each top-level session whose claim is set: count the resume durably (over the budget
the session gets `session.resume.exhausted`, which releases the claim, and is left
alone), then hand it to the runner, whose turn settles first (desktop.session.settle:
foreground shell jobs still in the PTY host adopted, other open parts settled as
interrupted, the restart notice only when work was lost) and then continues. Claims of
child sessions are released: a foreground subagent's parent call is settled with its
parent. This is the entry point the background-jobs recovery extends (markers, subagent
resumption) — `recover_claims` stays the last phase.
"""

from __future__ import annotations

import logging
import sqlite3

from desktop.session.bus import DurableBus, draft
from desktop.session.runner import SessionRunner
from desktop.store import sessions as q

log = logging.getLogger("desk.session.recovery")

RESUME_BUDGET = 10


async def recover(
    bus: DurableBus, runner: SessionRunner, *, budget: int = RESUME_BUDGET
) -> list[str]:
    """Resume every claimed root session; the ids handed to the runner."""
    return await recover_claims(bus, runner, budget=budget)


async def recover_claims(bus: DurableBus, runner: SessionRunner, *, budget: int) -> list[str]:
    def claimed(conn: sqlite3.Connection) -> list[tuple[str, int | None]]:
        q.release_child_claims(conn, [])
        return [(sid, q.count_resume(conn, sid)) for sid in q.list_suspended(conn)]

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
