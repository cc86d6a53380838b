"""`GET /api/event`: the live stream (Server-Sent Events), resumable from a durable position
without gap or duplicate.
"""

from __future__ import annotations

import re

from aiohttp import web

from desktop.agent.service import SessionService
from desktop.events.bus import frame
from desktop.events.fanout import Subscription, encode_event, resync_frame
from desktop.server.appkeys import ENGINE, EVENTS
from desktop.server.errors import ApiError
from desktop.store.log import now_ms

REPLAY_PAGE = 500
_POSITION = re.compile(r"^[0-9]{1,15}$")


def resume_position(request: web.Request) -> int | None:
    """Where the client left off. The header wins: an EventSource that reconnects by itself
    sends its newest id in it while its URL still carries the `after` it was opened with."""
    raw = request.headers.get("Last-Event-ID") or request.query.get("after")
    if raw is None or raw == "":
        return None
    if not _POSITION.match(raw.strip()):
        raise ApiError(400, "request.invalid", "Last-Event-ID / after must be an event position.")
    return int(raw.strip())


async def event_stream(request: web.Request) -> web.StreamResponse:
    after = resume_position(request)
    fanout = request.app[EVENTS]
    sessions = request.app[ENGINE].sessions
    sub = fanout.subscribe()
    response = web.StreamResponse(
        headers={
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-cache, no-store",
            "X-Accel-Buffering": "no",
        }
    )
    try:
        await response.prepare(request)
        head = await sessions.head()
        connected = encode_event("server.connected", {"position": head, "time": now_ms()})
        await response.write(b"retry: 1000\n" + connected)
        if after is not None and after > head:
            # A position this database never gave out (another data dir, a restore).
            await response.write(resync_frame("unknown_position"))
            return response
        sent = head if after is None else await _replay(response, sessions, after)
        await _live(response, sub, sent)
    except ConnectionResetError:
        pass  # the client left: the stream simply ends
    finally:
        fanout.unsubscribe(sub)
    return response


async def _replay(response: web.StreamResponse, sessions: SessionService, after: int) -> int:
    sent = after
    while True:
        events = await sessions.events_after(sent, REPLAY_PAGE)
        if not events:
            return sent
        await response.write(b"".join(frame(e) for e in events))
        sent = events[-1].position
        if len(events) < REPLAY_PAGE:
            return sent


async def _live(response: web.StreamResponse, sub: Subscription, sent: int) -> None:
    async for batch in sub.batches():
        out = []
        for position, data in batch:
            if position is not None:
                if position <= sent:
                    continue  # already replayed from the log
                sent = position
            out.append(data)
        if out:
            await response.write(b"".join(out))


def setup_event_routes(app: web.Application) -> None:
    app.router.add_get("/api/event", event_stream)
