"""A `kill -9` in the middle of a compaction: the successor resumes the session and the
conversation goes on to its end, never sending a half-compacted history.

Real `desk serve` processes, real `kill -9`; the strict fake provider lives in this test
process and outlives every service. The first summary request is held mid-answer while the
service is killed, so the compaction is cut at its most fragile point (its model call).
"""

from __future__ import annotations

import asyncio
import dataclasses
import signal
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from desktop.agent.compaction import SUMMARY_HEADER
from desktop.config import Settings
from tests.support.compaction import SUMMARY, WINDOW, is_summary, prose
from tests.support.fake_provider import Call, FakeProvider, Reply, text_reply, tool_call_reply
from tests.support.host import stop_host
from tests.support.runner import DEADLINE, configure
from tests.support.serve_process import spawn_serve
from tests.support.wait import wait_for

pytestmark = pytest.mark.restart

PROMPTS = 8


class Service:
    def __init__(self, process: asyncio.subprocess.Process, ready: dict[str, Any]) -> None:
        self.process = process
        self.url = str(ready["url"])
        self.headers = {"Authorization": f"Bearer {ready['token']}"}

    async def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        async with (
            aiohttp.ClientSession(headers=self.headers) as http,
            http.request(method, self.url + path, json=body) as response,
        ):
            assert response.status < 300, await response.text()
            return (await response.json())["data"]

    async def kill(self) -> None:
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGKILL)
        await asyncio.wait_for(self.process.wait(), DEADLINE)


async def start(log: Path) -> Service:
    return Service(*await spawn_serve(log))


async def until_answer(service: Service, sid: str, text: str) -> None:
    """Until the session's log holds the answer `text` and the session is no longer busy;
    it must then be idle."""
    last: list[str] = []

    async def answered() -> dict[str, Any] | None:
        events = await service.call("GET", f"/api/session/{sid}/log")
        last[:] = [e["type"] for e in events][-8:]
        if not any(e["type"] == "session.text" and e["data"]["text"] == text for e in events):
            return None
        session: dict[str, Any] = await service.call("GET", f"/api/session/{sid}")
        return session if session["status"] != "busy" else None

    session = await wait_for(
        answered, DEADLINE, lambda: f"the answer {text!r}, then not busy; last events {last}", 0.05
    )
    assert session["status"] == "idle", session


@pytest.mark.parametrize("moment", ["summary", "step"])
async def test_a_kill_9_during_compaction_leaves_a_session_that_goes_on_to_its_end(
    settings: Settings, tmp_path: Path, moment: str
) -> None:
    """`summary`: killed while the summary streams (nothing compacted yet); `step`: killed
    while the first request after the compaction event streams."""
    held = asyncio.Event()  # the moment has come
    gate = asyncio.Event()  # ...and its answer never goes on while the first service lives
    summaries = 0
    compacted_steps = 0

    def route(body: Any) -> Reply | None:
        nonlocal summaries, compacted_steps
        if not is_summary(body):
            messages = body["messages"]
            compacted = len(messages) > 1 and messages[1]["content"].startswith(SUMMARY_HEADER)
            if moment != "step" or not compacted or not fake.replies:
                return None
            compacted_steps += 1
            if compacted_steps > 1:
                return None
            # The scripted answer stays for the successor's request; this copy never ends.
            held.set()
            return dataclasses.replace(fake.replies[0], gate=gate, gate_after=1)
        summaries += 1
        reply = text_reply(SUMMARY)
        if moment == "summary" and summaries == 1:
            reply.gate, reply.gate_after = gate, 2
            held.set()
        return reply

    models = [{"id": "fake-model", "context_length": WINDOW}]
    async with FakeProvider(window=WINDOW, models=models, route=route) as fake:
        configure(settings, fake.base_url)
        log = tmp_path / "service.log"
        folder = tmp_path / "work"
        folder.mkdir()
        service = await start(log)
        try:
            sid = str(
                (await service.call("POST", "/api/session", {"directory": str(folder)}))["id"]
            )
            killed = False
            for i in range(PROMPTS):
                (folder / f"notes{i}.txt").write_text(prose(1500, i))
                fake.script(
                    tool_call_reply(Call(f"call_{i}", "read", {"path": f"notes{i}.txt"})),
                    text_reply(f"answer {i}"),
                )
                text = f"Read notes{i}.txt and tell me what it says."
                await service.call("POST", f"/api/session/{sid}/prompt", {"text": text})
                if not killed:
                    answered = asyncio.ensure_future(until_answer(service, sid, f"answer {i}"))
                    waiting = asyncio.ensure_future(held.wait())
                    done, _ = await asyncio.wait(
                        [answered, waiting], return_when=asyncio.FIRST_COMPLETED
                    )
                    for task in (answered, waiting):
                        task.cancel()
                    if waiting in done:
                        await service.kill()  # mid-compaction: its summary is half streamed
                        killed = True
                        gate.set()
                        service = await start(log)
                    else:
                        answered.result()
                        continue
                await until_answer(service, sid, f"answer {i}")
            assert killed, "no compaction happened"
            events = await service.call("GET", f"/api/session/{sid}/log")
            assert [e for e in events if e["type"] == "session.compacted"]
            assert not [e for e in events if e["type"] == "session.step.failed"]
            shown = await service.call("GET", f"/api/session/{sid}/message?limit=200")
            users = [m["text"] for m in shown if m["type"] == "user"]
            assert users == [f"Read notes{i}.txt and tell me what it says." for i in range(PROMPTS)]
        finally:
            gate.set()
            await service.kill()
            await stop_host(settings)
        assert fake.invalid_count == 0
        assert fake.overflows == []
        assert summaries >= (2 if moment == "summary" else 1)  # a cut one is made again
        for request in fake.requests:
            messages = request.body["messages"]
            if is_summary(request.body) or len(messages) < 2:
                continue
            if messages[1]["content"].startswith(SUMMARY_HEADER):
                # A compacted history is whole: the complete summary, then the recent part
                # without the summarised first prompt.
                assert SUMMARY in messages[1]["content"]
                contents = [m.get("content") or "" for m in messages[2:]]
                assert not any("Read notes0.txt" in c for c in contents)
