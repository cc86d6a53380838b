"""`POST /api/session/{id}/background` moves a foreground `subagent` call too, through real
`desk serve` processes against the strict fake provider: the parent's call returns "moved",
its turn goes on while the child keeps running (its stream held by a gate), and the child's
answer reaches the parent as exactly one `<subagent>` notice, also across a `kill -9`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from desktop.config import Settings
from tests.support.fake_provider import Call, FakeProvider, Reply, text_reply, tool_call_reply
from tests.support.host import stop_host
from tests.support.jobs import call, eventually, texts
from tests.support.service import Service as Served
from tests.support.service import serve

CHILD_PROMPT = "count-the-files-please"
MOVED = "It works in the background now."


def held(reply: Reply, gate: asyncio.Event) -> Reply:
    """`reply` whose stream stops after its first chunk until `gate` is set."""
    reply.gate, reply.gate_after = gate, 1
    return reply


async def messages_of(served: Served, sid: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = await call(served, "GET", f"/api/session/{sid}/message?limit=200")
    return found


async def start_and_move(
    served: Served, fake: FakeProvider, tmp_path: Path
) -> tuple[str, dict[str, Any]]:
    """A parent whose foreground subagent is running (its child's stream held), moved to
    the background; the parent's turn has gone on. The session id and the moved job."""
    sid = (await call(served, "POST", "/api/session", {"directory": str(tmp_path)}))["id"]
    await call(served, "POST", f"/api/session/{sid}/prompt", {"text": "delegate"})

    async def waiting() -> list[dict[str, Any]] | None:
        jobs: list[dict[str, Any]] = await call(served, "GET", f"/api/session/{sid}/jobs")
        child_asked = len(fake.requests) >= 2
        return jobs if jobs and jobs[0]["status"] == "running" and child_asked else None

    (job,) = await eventually(waiting, "the foreground subagent and its child's request")
    assert CHILD_PROMPT in json.dumps(fake.requests[1].body["messages"])
    assert (job["type"], job["background"]) == ("subagent", False)
    (moved,) = await call(served, "POST", f"/api/session/{sid}/background")
    assert (moved["id"], moved["type"], moved["background"]) == (job["id"], "subagent", True)
    assert moved["notification_id"]

    async def went_on() -> bool:
        return MOVED in texts(await messages_of(served, sid))

    await eventually(went_on, "the parent's turn goes on")
    assert len(fake.requests) == 3  # the child is still held: no answer of it yet
    (result,) = [
        p
        for m in await messages_of(served, sid)
        if m["type"] == "assistant"
        for p in m["content"]
        if p["type"] == "tool" and p["name"] == "subagent"
    ]
    assert result["state"]["status"] == "completed"
    assert "Moved to the background" in result["state"]["content"]
    assert result["state"]["metadata"]["background"] is True
    return sid, moved


async def read_once(served: Served, sid: str) -> list[dict[str, Any]]:
    """The parent's notices once it read the child's answer and is idle."""

    async def noticed() -> list[dict[str, Any]] | None:
        messages = await messages_of(served, sid)
        found = [m for m in messages if m["type"] == "synthetic"]
        session = await call(served, "GET", f"/api/session/{sid}")
        done = "parent read it" in texts(messages) and session["status"] != "busy"
        return found if done else None

    notices: list[dict[str, Any]] = await eventually(noticed, "the notice and the parent's turn")
    return notices


def subagent_call() -> Reply:
    args = {"description": "count files", "prompt": CHILD_PROMPT}
    return tool_call_reply(Call("call_sub", "subagent", args))


async def test_a_moved_foreground_subagent_keeps_running_and_its_answer_is_noticed_once(
    settings: Settings, fake: FakeProvider, tmp_path: Path
) -> None:
    gate = asyncio.Event()
    fake.script(
        subagent_call(),
        held(text_reply("helper-", "answer"), gate),  # the child's answer, held
        text_reply(MOVED),  # the parent's turn after the move
        text_reply("parent read it"),  # the parent woken by the notice
    )
    served = await asyncio.to_thread(serve, settings)
    try:
        sid, moved = await start_and_move(served, fake, tmp_path)
        assert await call(served, "POST", f"/api/session/{sid}/background") == []
        gate.set()
        (notice,) = await read_once(served, sid)
        assert notice["id"] == moved["notification_id"]
        assert notice["metadata"]["source"] == "subagent"
        assert notice["metadata"]["child_id"] == moved["id"]
        assert notice["metadata"]["state"] == "completed"
        assert "helper-answer" in notice["text"]
        assert notice["text"].startswith(f'<subagent sessionID="{moved["id"]}"')
        assert len(fake.requests) == 4
        assert "helper-answer" in json.dumps(fake.requests[3].body["messages"])
        (job,) = await call(served, "GET", f"/api/session/{sid}/jobs")
        assert (job["id"], job["status"], job["background"]) == (moved["id"], "completed", True)
        assert fake.invalid_count == 0
    finally:
        gate.set()
        await asyncio.to_thread(served.kill)
        await stop_host(settings)


@pytest.mark.restart
async def test_a_moved_foreground_subagent_is_noticed_once_across_a_kill_9(
    settings: Settings, fake: FakeProvider, tmp_path: Path
) -> None:
    gate = asyncio.Event()
    fake.script(
        subagent_call(),
        held(text_reply("never-", "delivered"), gate),  # dies with the first service
        text_reply(MOVED),
        text_reply("helper-answer"),  # the child resumed by the successor
        text_reply("parent read it"),
    )
    first = await asyncio.to_thread(serve, settings)
    second: Served | None = None
    try:
        sid, moved = await start_and_move(first, fake, tmp_path)
        await asyncio.to_thread(first.kill)
        gate.set()  # the held stream ends on a dead connection
        second = await asyncio.to_thread(serve, settings)
        (notice,) = await read_once(second, sid)
        assert notice["id"] == moved["notification_id"]
        assert notice["metadata"]["child_id"] == moved["id"]
        assert notice["metadata"]["state"] == "completed"
        assert "helper-answer" in notice["text"]
        assert "never-delivered" not in notice["text"]
        assert len(fake.requests) == 5
        assert fake.invalid_count == 0
        # Nothing left to deliver: no marker pending, one notice however often one looks.
        (job,) = await call(second, "GET", f"/api/session/{sid}/jobs")
        assert (job["status"], job["background"]) == ("completed", True)
        assert len([m for m in await messages_of(second, sid) if m["type"] == "synthetic"]) == 1
    finally:
        gate.set()
        for served in (first, second):
            if served is not None:
                await asyncio.to_thread(served.kill)
        await stop_host(settings)
