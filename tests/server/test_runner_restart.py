"""A `shell` call survives the service dying under it, end to end.

Real `desk serve` processes, a real PTY host, real `kill -9`, the strict fake provider in
this test process (it outlives every service). The command runs as a PTY host job, so a
successor service adopts it and records its real output; only when the PTY host dies too
is the call settled as interrupted, with the restart notice lowered after the results.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from desktop.agent.settle import RESTART_NOTICE
from desktop.config import Settings
from desktop.jobs.host import ShellJobs
from desktop.process.liveness import is_alive
from desktop.ptyhost.hostfiles import read_host_registration
from tests.support.fake_provider import Call, FakeProvider, text_reply, tool_call_reply
from tests.support.host import stop_host
from tests.support.runner import DEADLINE, configure
from tests.support.serve_process import spawn_serve
from tests.support.wait import wait_for

pytestmark = pytest.mark.restart


def gated(go: Path) -> str:
    """A command that runs until the test creates `go`, then prints done-42: it outlives
    whatever the test does before that, however long it takes."""
    return f"while [ ! -e {go} ]; do sleep 0.05; done; echo done-$((6*7))"


class Service:
    def __init__(self, process: asyncio.subprocess.Process, ready: dict[str, Any]) -> None:
        self.process = process
        self.url = str(ready["url"])
        self.headers = {"Authorization": f"Bearer {ready['token']}"}

    async def get(self, path: str) -> Any:
        async with (
            aiohttp.ClientSession(headers=self.headers) as http,
            http.get(self.url + path) as response,
        ):
            return (await response.json())["data"]

    async def post(self, path: str, body: dict[str, Any]) -> Any:
        async with (
            aiohttp.ClientSession(headers=self.headers) as http,
            http.post(self.url + path, json=body) as response,
        ):
            assert response.status < 300, await response.text()
            return (await response.json())["data"]

    async def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.process.returncode is None:
            self.process.send_signal(sig)
        await asyncio.wait_for(self.process.wait(), DEADLINE)


async def start(log: Path) -> Service:
    return Service(*await spawn_serve(log))


async def until(service: Service, sid: str, kind: str, count: int = 1, **match: Any) -> list[Any]:
    seen: list[Any] = []

    async def found() -> list[Any] | None:
        seen[:] = await service.get(f"/api/session/{sid}/log")
        matching = [
            e
            for e in seen
            if e["type"] == kind and all(e["data"].get(k) == v for k, v in match.items())
        ]
        return list(seen) if len(matching) >= count else None

    return await wait_for(found, DEADLINE, lambda: [e["type"] for e in seen], 0.05)  # type: ignore[no-any-return]


async def until_job_running(settings: Settings, sid: str, call_id: str) -> None:
    jobs = ShellJobs.for_settings(settings)
    try:

        async def running() -> bool:
            return (await jobs.find_job(sid, call_id)).status == "running"

        await wait_for(running, DEADLINE, "the job to run", 0.05)
    finally:
        await jobs.close()


@pytest.fixture
async def fake(settings: Settings) -> AsyncIterator[FakeProvider]:
    async with FakeProvider() as provider:
        configure(settings, provider.base_url)
        yield provider
    await stop_host(settings)


async def begin(
    settings: Settings, fake: FakeProvider, tmp_path: Path, command: str
) -> tuple[Service, str]:
    fake.script(
        tool_call_reply(Call("call_sh", "shell", {"command": command})), text_reply("finished")
    )
    service = await start(tmp_path / "service.log")
    session = await service.post("/api/session", {"directory": str(tmp_path)})
    sid = str(session["id"])
    await service.post(f"/api/session/{sid}/prompt", {"text": "run it"})
    await until(service, sid, "session.tool.called", call_id="call_sh")
    await until_job_running(settings, sid, "call_sh")
    return service, sid


async def finish_adopted(service: Service, sid: str, fake: FakeProvider) -> None:
    events = await until(service, sid, "session.step.ended", count=2)
    results = [e for e in events if e["type"] in ("session.tool.success", "session.tool.failed")]
    assert [(e["type"], e["data"]["call_id"]) for e in results] == [
        ("session.tool.success", "call_sh")
    ]
    assert "done-42" in results[0]["data"]["content"]
    assert results[0]["data"]["metadata"]["adopted"] is True
    assert not any(e["type"] == "session.synthetic" for e in events)
    last = fake.requests[-1].body["messages"]
    tool = next(m for m in last if m["role"] == "tool")
    assert "done-42" in tool["content"]
    assert fake.invalid_count == 0
    assert len(fake.requests) == 2


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["kill-9", "sigterm"])
async def test_a_shell_call_outlives_the_service_and_the_successor_records_done_42(
    settings: Settings, fake: FakeProvider, tmp_path: Path, sig: int
) -> None:
    go = tmp_path / "go"
    first, sid = await begin(settings, fake, tmp_path, gated(go))
    await first.kill(sig)
    second = await start(tmp_path / "service.log")
    go.touch()  # the command ends only under the successor
    try:
        await finish_adopted(second, sid, fake)
    finally:
        await second.kill()


async def test_three_kills_in_a_row_still_end_with_the_commands_real_result(
    settings: Settings, fake: FakeProvider, tmp_path: Path
) -> None:
    # The command waits for a file, not a clock: three restarts take what they take.
    go = tmp_path / "go"
    service, sid = await begin(settings, fake, tmp_path, gated(go))
    for _ in range(3):
        await service.kill()
        service = await start(tmp_path / "service.log")
        await until_job_running(settings, sid, "call_sh")
    go.touch()
    try:
        await finish_adopted(service, sid, fake)
    finally:
        await service.kill()


async def test_the_tools_own_command_terminating_the_service_is_adopted_by_the_successor(
    settings: Settings, fake: FakeProvider, tmp_path: Path
) -> None:
    pid_file, kill, go = tmp_path / "service.pid", tmp_path / "kill", tmp_path / "go"
    command = f"while [ ! -e {kill} ]; do sleep 0.05; done; kill -TERM $(cat {pid_file}); "
    command += gated(go)
    fake.script(
        tool_call_reply(Call("call_sh", "shell", {"command": command})), text_reply("finished")
    )
    first = await start(tmp_path / "service.log")
    pid_file.write_text(str(first.process.pid))
    session = await first.post("/api/session", {"directory": str(tmp_path)})
    sid = str(session["id"])
    await first.post(f"/api/session/{sid}/prompt", {"text": "restart yourself"})
    await until_job_running(settings, sid, "call_sh")
    kill.touch()  # the command terminates its service once it runs as a job
    await asyncio.wait_for(first.process.wait(), DEADLINE)
    second = await start(tmp_path / "service.log")
    go.touch()
    try:
        await finish_adopted(second, sid, fake)
    finally:
        await second.kill()


async def test_with_the_pty_host_killed_too_the_part_ends_interrupted_and_the_notice_follows(
    settings: Settings, fake: FakeProvider, tmp_path: Path
) -> None:
    first, sid = await begin(settings, fake, tmp_path, gated(tmp_path / "go"))
    registration = read_host_registration(settings)
    assert registration is not None
    await first.kill()
    os.kill(registration.pid, signal.SIGKILL)
    await wait_for(lambda: not is_alive(registration.pid), DEADLINE, "the PTY host gone", 0.02)
    second = await start(tmp_path / "service.log")
    try:
        events = await until(second, sid, "session.step.ended", count=2)
        failed = next(e for e in events if e["type"] == "session.tool.failed")["data"]
        assert failed["error"] == {
            "type": "aborted",
            "message": "Tool execution interrupted: shell",
        }
        kinds = [e["type"] for e in events]
        assert kinds.index("session.tool.failed") < kinds.index("session.synthetic")
        messages = fake.requests[-1].body["messages"]
        at = next(i for i, m in enumerate(messages) if m.get("tool_calls"))
        assert messages[at + 1]["role"] == "tool"
        assert messages[at + 1]["content"] == "Tool execution interrupted: shell"
        assert messages[at + 2] == {"role": "user", "content": RESTART_NOTICE}
        assert fake.invalid_count == 0
        assert len(fake.requests) == 2
    finally:
        await second.kill()


async def test_a_user_interrupt_kills_the_running_command_and_nothing_resumes_it(
    settings: Settings, fake: FakeProvider, tmp_path: Path
) -> None:
    first, sid = await begin(settings, fake, tmp_path, "sleep 30; echo never")
    answer = await first.post(f"/api/session/{sid}/interrupt", {})
    assert answer == {"interrupted": True}
    events = await until(first, sid, "session.execution.interrupted", reason="user")
    failed = next(e for e in events if e["type"] == "session.tool.failed")["data"]
    assert failed["error"]["type"] == "cancelled"
    jobs = ShellJobs.for_settings(settings)
    try:
        state = await jobs.wait_job((await jobs.find_job(sid, "call_sh")).key, within=DEADLINE)
        assert state.status in ("exited", "gone")
        assert state.reason in ("killed", None)
    finally:
        await jobs.close()
    await first.kill()
    second = await start(tmp_path / "service.log")
    try:
        session = await second.get(f"/api/session/{sid}")
        assert session["status"] == "idle"
        assert len(fake.requests) == 1
        assert fake.invalid_count == 0
        after = await second.get(f"/api/session/{sid}/log")
        assert [e["type"] for e in after] == [e["type"] for e in events]
    finally:
        await second.kill()
