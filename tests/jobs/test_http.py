"""Through the HTTP API of real `desk serve` processes against the strict fake provider:
a background command outlives a `kill -9` of the service, the successor adopts its job, and
its real output reaches the model exactly once, in requests a strict provider accepts."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from desktop.config import Settings
from desktop.process.liveness import is_alive
from desktop.ptyhost.hostfiles import read_host_registration
from tests.support.fake_provider import Call, FakeProvider, text_reply, tool_call_reply
from tests.support.host import stop_host
from tests.support.jobs import call, eventually, texts
from tests.support.service import Service as Served
from tests.support.service import serve
from tests.support.sessions import recorded_jobs


def _pid(served: Served) -> int:
    assert served.process is not None
    return served.process.pid


async def answered(served: Served, sid: str, text: str) -> list[dict[str, Any]] | None:
    """The session's messages once an assistant message says `text` (None before)."""
    messages: list[dict[str, Any]] = await call(
        served, "GET", f"/api/session/{sid}/message?limit=200"
    )
    return messages if text in texts(messages) else None


@pytest.mark.restart
async def test_a_background_command_outliving_a_kill_9_notifies_once_with_its_real_output(
    settings: Settings, fake: FakeProvider, tmp_path: Path
) -> None:
    gate = tmp_path / "go"
    command = f"while [ ! -e {gate} ]; do sleep 0.05; done; echo bg-$((6*7))"
    fake.script(
        tool_call_reply(Call("call_bg", "shell", {"command": command, "background": True})),
        text_reply("Started it."),
        text_reply("It printed bg-42."),
    )
    first = await asyncio.to_thread(serve, settings)
    second: Served | None = None
    try:
        sid = (await call(first, "POST", "/api/session", {"directory": str(tmp_path)}))["id"]
        await call(first, "POST", f"/api/session/{sid}/prompt", {"text": "run it in background"})

        await eventually(lambda: answered(first, sid, "Started it."), "the first answer")
        (job,) = await call(first, "GET", f"/api/session/{sid}/jobs")
        assert (job["type"], job["status"], job["background"]) == ("shell", "running", True)
        await asyncio.to_thread(first.kill)

        second = await asyncio.to_thread(serve, settings)
        (adopted,) = await call(second, "GET", f"/api/session/{sid}/jobs")
        assert adopted["id"] == job["id"]
        assert adopted["status"] == "running"
        await asyncio.to_thread(gate.touch)
        messages = await eventually(
            lambda: answered(second, sid, "It printed bg-42."), "the notice's turn"
        )
        notices = [m for m in messages if m["type"] == "synthetic" and "bg-42" in m["text"]]
        assert len(notices) == 1
        assert 'state="completed"' in notices[0]["text"]
        assert notices[0]["id"] == job["notification_id"]
        assert len(fake.requests) == 3
        assert fake.invalid_count == 0
        assert "bg-42" in json.dumps(fake.requests[2].body["messages"])
        assert "bg-42" not in json.dumps(fake.requests[1].body["messages"])
        (done,) = await call(second, "GET", f"/api/session/{sid}/jobs")
        assert done["status"] == "completed"
    finally:
        for served in (first, second):
            if served is not None:
                await asyncio.to_thread(served.kill)
        await stop_host(settings)


@pytest.mark.restart
async def test_a_background_command_killed_with_the_pty_host_is_reported_cancelled_once(
    settings: Settings, fake: FakeProvider, tmp_path: Path
) -> None:
    fake.script(
        tool_call_reply(Call("call_k", "shell", {"command": "sleep 300", "background": True})),
        text_reply("Started it."),
        text_reply("Noted."),
    )
    first = await asyncio.to_thread(serve, settings)
    second: Served | None = None
    try:
        sid = (await call(first, "POST", "/api/session", {"directory": str(tmp_path)}))["id"]
        await call(first, "POST", f"/api/session/{sid}/prompt", {"text": "sleep in background"})

        async def messages(served: Served) -> list[dict[str, Any]]:
            found: list[dict[str, Any]] = await call(
                served, "GET", f"/api/session/{sid}/message?limit=200"
            )
            return found

        await eventually(lambda: answered(first, sid, "Started it."), "the first answer")
        await asyncio.to_thread(first.kill)
        registration = read_host_registration(settings)
        assert registration is not None
        os.kill(registration.pid, signal.SIGKILL)  # the host dies with the command

        second = await asyncio.to_thread(serve, settings)

        async def notices() -> list[dict[str, Any]]:
            return [
                m
                for m in await messages(second)
                if m["type"] == "synthetic" and "server restarted" in m["text"]
            ]

        (notice,) = await eventually(notices, "the cancellation notice")
        assert 'state="cancelled"' in notice["text"]
        assert len(fake.requests) == 2  # admitted without waking the idle session
        await call(second, "POST", f"/api/session/{sid}/prompt", {"text": "what happened?"})
        await eventually(lambda: answered(second, sid, "Noted."), "the next turn")
        assert len(await notices()) == 1
        sent = json.dumps(fake.requests[2].body["messages"])
        assert sent.count("Command cancelled because the server restarted") == 1
        assert fake.invalid_count == 0
    finally:
        for served in (first, second):
            if served is not None:
                await asyncio.to_thread(served.kill)
        await stop_host(settings)


@pytest.mark.soak
@pytest.mark.timeout(300)  # twenty kill -9 rounds: 60-120 s on a loaded machine
async def test_soak_kill_9_at_random_points_of_a_background_heavy_conversation(
    settings: Settings, fake: FakeProvider, tmp_path: Path
) -> None:
    """20 rounds: a prompt whose answer starts a background command, the service killed
    with SIGKILL at a random moment, a successor started. Then: every call that went to
    the background has exactly one notice, no request was invalid, the session is idle,
    and no service process is left."""
    rng = random.Random(10)
    fake.default = text_reply("ok")
    served = await asyncio.to_thread(serve, settings)
    pids = [_pid(served)]
    try:
        sid = (await call(served, "POST", "/api/session", {"directory": str(tmp_path)}))["id"]
        for i in range(20):
            fake.script(
                tool_call_reply(
                    Call(f"call_{i}", "shell", {"command": f"echo soak-{i}", "background": True})
                ),
                text_reply(f"round {i}"),
            )
            await call(served, "POST", f"/api/session/{sid}/prompt", {"text": f"round {i}"})
            await asyncio.sleep(rng.uniform(0, 0.4))  # the random crash point
            await asyncio.to_thread(served.kill)
            served = await asyncio.to_thread(serve, settings)
            pids.append(_pid(served))

        async def settled() -> list[dict[str, Any]] | None:
            session = await call(served, "GET", f"/api/session/{sid}")
            messages: list[dict[str, Any]] = await call(
                served, "GET", f"/api/session/{sid}/message?limit=200"
            )
            background = [
                p
                for m in messages
                if m["type"] == "assistant"
                for p in m["content"]
                if p["type"] == "tool"
                and p["state"]["status"] == "completed"
                and p["state"].get("metadata", {}).get("background")
            ]
            jobs = await call(served, "GET", f"/api/session/{sid}/jobs")
            noticed = {m["metadata"].get("job_id") for m in messages if m["type"] == "synthetic"}
            waiting = [p for p in background if p["state"]["metadata"]["job"] not in noticed]
            busy = session["status"] == "busy" or any(j["status"] == "running" for j in jobs)
            return None if waiting or busy else messages

        messages = await eventually(settled, "every background call noticed, session idle")
        notices = [
            m["metadata"]["job_id"]
            for m in messages
            if m["type"] == "synthetic" and m["metadata"].get("source") == "shell"
        ]
        assert len(notices) == len(set(notices))  # exactly once each
        assert len(notices) >= 1
        assert fake.invalid_count == 0
    finally:
        await asyncio.to_thread(served.kill)
        await stop_host(settings)
    for pid in pids:
        assert not is_alive(pid)


async def test_a_background_subagent_notifies_its_parent_once_with_its_answer(
    settings: Settings, fake: FakeProvider, tmp_path: Path
) -> None:
    fake.script(
        tool_call_reply(
            Call(
                "call_sub",
                "subagent",
                {"description": "count files", "prompt": "count", "background": True},
            )
        ),
        text_reply("helper-answer"),  # the child's answer, or the parent's ack: either order
        text_reply("helper-answer"),
    )
    fake.default = text_reply("parent read it")
    served = await asyncio.to_thread(serve, settings)
    try:
        sid = (await call(served, "POST", "/api/session", {"directory": str(tmp_path)}))["id"]
        await call(served, "POST", f"/api/session/{sid}/prompt", {"text": "delegate"})

        # The notice is a steer: a child that ends before the parent's step after the tool
        # call is read in that step, otherwise it wakes a turn of its own. Either way the
        # parent stays busy from the notice's admission until a step has read it.
        async def noticed() -> list[dict[str, Any]] | None:
            messages: list[dict[str, Any]] = await call(
                served, "GET", f"/api/session/{sid}/message?limit=200"
            )
            found = [m for m in messages if m["type"] == "synthetic"]
            session = await call(served, "GET", f"/api/session/{sid}")
            return messages if found and session["status"] != "busy" else None

        messages = await eventually(noticed, "the subagent's notice and the parent's turn")
        (notice,) = [m for m in messages if m["type"] == "synthetic"]
        assert messages[-1]["type"] == "assistant", "the parent answered after the notice"
        read_by = [
            r
            for r in fake.requests
            if any(m.get("content") == notice["text"] for m in r.body["messages"])
        ]
        assert len(read_by) == 1, "exactly one parent request carries the notice"
        assert notice["metadata"]["source"] == "subagent"
        assert notice["metadata"]["state"] == "completed"
        assert "helper-answer" in notice["text"]
        children = [s for s in await call(served, "GET", "/api/session") if s["parent_id"] == sid]
        assert len(children) == 1
        assert notice["metadata"]["child_id"] == children[0]["id"]
        assert fake.invalid_count == 0
        (job,) = await call(served, "GET", f"/api/session/{sid}/jobs")
        assert (job["type"], job["status"], job["id"]) == (
            "subagent",
            "completed",
            children[0]["id"],
        )
    finally:
        await asyncio.to_thread(served.kill)
        await stop_host(settings)


async def test_cancelling_a_background_job_kills_it_and_notices_cancelled_once(
    settings: Settings, fake: FakeProvider, tmp_path: Path
) -> None:
    fake.script(
        tool_call_reply(Call("call_x", "shell", {"command": "sleep 300", "background": True})),
        text_reply("Started it."),
    )
    fake.default = text_reply("Noted the cancel.")
    served = await asyncio.to_thread(serve, settings)
    try:
        sid = (await call(served, "POST", "/api/session", {"directory": str(tmp_path)}))["id"]
        await call(served, "POST", f"/api/session/{sid}/prompt", {"text": "sleep"})

        async def running() -> list[dict[str, Any]] | None:
            jobs: list[dict[str, Any]] = await call(served, "GET", f"/api/session/{sid}/jobs")
            return jobs if jobs and jobs[0]["status"] == "running" else None

        (job,) = await eventually(running, "the background job")
        async with aiohttp.ClientSession(headers=served.headers) as http:
            for path, kind in (
                (f"/api/session/{sid}/jobs/job:nope/cancel", "job.not_found"),
                (f"/api/session/{sid}/jobs/{'x' * 300}/cancel", "job.not_found"),
                (f"/api/session/ses_missing/jobs/{job['id']}/cancel", "session.not_found"),
                ("/api/session/ses_missing/jobs", "session.not_found"),
            ):
                method = http.get if path.endswith("/jobs") else http.post
                async with method(served.url + path) as response:
                    assert response.status == 404
                    assert (await response.json())["error"]["type"] == kind
        cancelled = await call(served, "POST", f"/api/session/{sid}/jobs/{job['id']}/cancel")
        assert cancelled["status"] == "cancelled"

        async def noticed() -> list[dict[str, Any]] | None:
            messages: list[dict[str, Any]] = await call(
                served, "GET", f"/api/session/{sid}/message?limit=200"
            )
            found = [m for m in messages if m["type"] == "synthetic"]
            return found if found and "Noted the cancel." in texts(messages) else None

        (notice,) = await eventually(noticed, "the cancellation notice")
        assert 'state="cancelled"' in notice["text"]
        again = await call(served, "POST", f"/api/session/{sid}/jobs/{job['id']}/cancel")
        assert again["status"] == "cancelled"  # settled: answered as it is
        assert len(await noticed() or []) == 1
        assert fake.invalid_count == 0
    finally:
        await asyncio.to_thread(served.kill)
        await stop_host(settings)


async def test_a_foreground_command_moved_to_the_background_notifies_once_when_done(
    settings: Settings, fake: FakeProvider, tmp_path: Path
) -> None:
    gate = tmp_path / "go"
    command = f"while [ ! -e {gate} ]; do sleep 0.05; done; echo moved-$((6*7))"
    fake.script(
        tool_call_reply(Call("call_fg", "shell", {"command": command})),
        text_reply("It runs in the background now."),
        text_reply("It printed moved-42."),
    )
    served = await asyncio.to_thread(serve, settings)
    try:
        sid = (await call(served, "POST", "/api/session", {"directory": str(tmp_path)}))["id"]
        await call(served, "POST", f"/api/session/{sid}/prompt", {"text": "run it"})

        async def waiting() -> list[dict[str, Any]] | None:
            jobs: list[dict[str, Any]] = await call(served, "GET", f"/api/session/{sid}/jobs")
            return jobs if jobs and jobs[0]["status"] == "running" else None

        (job,) = await eventually(waiting, "the foreground job")
        assert job["background"] is False
        (moved,) = await call(served, "POST", f"/api/session/{sid}/background")
        assert moved["id"] == job["id"]
        assert moved["background"] is True

        await eventually(
            lambda: answered(served, sid, "It runs in the background now."), "the turn goes on"
        )
        assert len(fake.requests) == 2
        await asyncio.to_thread(gate.touch)
        messages = await eventually(
            lambda: answered(served, sid, "It printed moved-42."), "the notice"
        )
        notices = [m for m in messages if m["type"] == "synthetic"]
        assert len(notices) == 1
        assert "moved-42" in notices[0]["text"]
        assert await call(served, "POST", f"/api/session/{sid}/background") == []
        assert fake.invalid_count == 0
    finally:
        await asyncio.to_thread(served.kill)
        await stop_host(settings)


@pytest.mark.restart
async def test_ended_jobs_stay_in_the_jobs_list_after_a_kill_9_of_the_service(
    settings: Settings, fake: FakeProvider, tmp_path: Path
) -> None:
    fake.script(
        tool_call_reply(Call("call_one", "shell", {"command": "echo one-$((0+1))"})),
        text_reply("First done."),
        tool_call_reply(Call("call_two", "shell", {"command": "echo two-$((1+1))"})),
        text_reply("Second done."),
    )
    first = await asyncio.to_thread(serve, settings)
    second: Served | None = None
    try:
        sid = (await call(first, "POST", "/api/session", {"directory": str(tmp_path)}))["id"]
        await call(first, "POST", f"/api/session/{sid}/prompt", {"text": "run one"})

        await eventually(lambda: answered(first, sid, "First done."), "the first answer")
        (ended,) = await call(first, "GET", f"/api/session/{sid}/jobs")
        assert (ended["status"], ended["call_id"]) == ("completed", "call_one")
        await eventually(
            lambda: asyncio.to_thread(lambda: recorded_jobs(settings.database_path) == 1),
            "the job's record",
        )
        await asyncio.to_thread(first.kill)

        second = await asyncio.to_thread(serve, settings)
        # The successor never ran it, yet lists it as it was, with its tab for the links, and
        # a cancel answers it as it is (as for any settled job).
        assert await call(second, "GET", f"/api/session/{sid}/jobs") == [ended]
        cancel = f"/api/session/{sid}/jobs/{ended['id']}/cancel"
        assert await call(second, "POST", cancel) == ended
        await call(second, "POST", f"/api/session/{sid}/prompt", {"text": "run two"})
        await eventually(lambda: answered(second, sid, "Second done."), "the second answer")
        jobs = await call(second, "GET", f"/api/session/{sid}/jobs")
        assert [j["call_id"] for j in jobs] == ["call_one", "call_two"], "oldest first"
        assert jobs[0] == ended
        assert jobs[1]["status"] == "completed"
        assert fake.invalid_count == 0
    finally:
        for served in (first, second):
            if served is not None:
                await asyncio.to_thread(served.kill)
        await stop_host(settings)
