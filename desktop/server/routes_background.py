"""Background-job routes: a session's jobs, cancelling one, and moving the calls a turn waits
for to the background (the job shape is `desktop.jobs.model.Job.to_json`).
"""

from __future__ import annotations

import re

from aiohttp import web

from desktop.events.schema import ID
from desktop.jobs.model import job_not_found
from desktop.server.appkeys import ENGINE
from desktop.server.errors import ApiError, data_response

# Shell job ids are PTY host keys (job:<session>:<call>), subagent ones session ids.
_JOB_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,200}$")


def _session_id(request: web.Request) -> str:
    value = request.match_info["id"]
    if not ID.match(value):
        raise ApiError(404, "session.not_found", f"No session {value!r}.")
    return value


async def list_jobs(request: web.Request) -> web.Response:
    session_id = _session_id(request)
    await request.app[ENGINE].sessions.get(session_id)
    return data_response(await request.app[ENGINE].background.jobs_of(session_id))


async def cancel_job(request: web.Request) -> web.Response:
    session_id = _session_id(request)
    job_id = request.match_info["job_id"]
    await request.app[ENGINE].sessions.get(session_id)
    if not _JOB_ID.match(job_id):
        raise job_not_found(session_id, job_id)
    return data_response(await request.app[ENGINE].background.cancel(session_id, job_id))


async def move_to_background(request: web.Request) -> web.Response:
    """Every call the session's turn waits for goes to the background; the moved jobs."""
    session_id = _session_id(request)
    await request.app[ENGINE].sessions.get(session_id)
    return data_response(await request.app[ENGINE].background.background_session(session_id))


def setup_background_routes(app: web.Application) -> None:
    app.router.add_post("/api/session/{id}/background", move_to_background)
    app.router.add_get("/api/session/{id}/jobs", list_jobs)
    app.router.add_post("/api/session/{id}/jobs/{job_id}/cancel", cancel_job)
