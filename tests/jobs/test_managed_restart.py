"""The agent's own `shell` tool runs `desk service restart` on the managed service that
runs the agent. The command outlives the service it restarts (it is
a PTY host job), the successor adopts the job and records exit 0, and the turn continues,
with no invalid request sent."""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.support.desk import Desk, cleanup, desk_argv, make_desk
from tests.support.fake_provider import Call, FakeProvider, text_reply, tool_call_reply
from tests.support.wait import wait_for

pytestmark = pytest.mark.restart

DEADLINE = 60.0


@pytest.fixture
async def managed(tmp_path: Path) -> AsyncIterator[Desk]:
    handle = make_desk(tmp_path)
    try:
        yield handle
    finally:
        await asyncio.to_thread(cleanup, handle)


async def api(desk: Desk, method: str, path: str, body: object = None) -> Any:
    registration = desk.registration()
    headers = {"Authorization": f"Bearer {registration['token']}"}
    async with (
        aiohttp.ClientSession(headers=headers) as http,
        http.request(method, f"{registration['url']}{path}", json=body) as response,
    ):
        payload = await response.json()
        assert response.status < 400, payload
        return payload["data"]


async def test_desk_service_restart_run_by_the_agent_completes_with_exit_0(
    managed: Desk, tmp_path: Path
) -> None:
    async with FakeProvider() as fake:
        # The agent's commands carry none of Desk's settings: the command names its dirs.
        dirs = ["--data-dir", str(managed.data_dir), "--runtime-dir", str(managed.runtime_dir)]
        argv = [*desk_argv(), *dirs, "service", "restart"]
        restart = " ".join(shlex.quote(a) for a in argv)
        fake.script(
            tool_call_reply(Call("call_restart", "shell", {"command": restart})),
            text_reply("Restarted."),
        )
        first = await asyncio.to_thread(managed.json, "service", "start")
        await api(
            managed,
            "PUT",
            "/api/config/provider",
            {
                "provider": "openai-compatible",
                "base_url": fake.base_url,
                "model": "fake-model",
                "api_key": "sk-test",
            },
        )
        work = tmp_path / "work"
        work.mkdir()
        sid = (await api(managed, "POST", "/api/session", {"directory": str(work)}))["id"]
        await api(managed, "POST", f"/api/session/{sid}/prompt", {"text": "restart desk"})

        messages: list[dict[str, Any]] = []

        async def answered() -> bool:
            try:
                if managed.registration()["pid"] == first["pid"]:
                    return False
                messages[:] = await api(managed, "GET", f"/api/session/{sid}/message?limit=200")
            except (OSError, ValueError, aiohttp.ClientError):
                return False  # between the two services
            answers = [
                p["text"]
                for m in messages
                if m["type"] == "assistant"
                for p in m["content"]
                if p["type"] == "text"
            ]
            return "Restarted." in answers

        await wait_for(answered, DEADLINE, lambda: f"no answer: {messages}", 0.1)
        (part,) = [
            p
            for m in messages
            if m["type"] == "assistant"
            for p in m["content"]
            if p["type"] == "tool"
        ]
        assert part["state"]["status"] == "completed", part
        assert part["state"]["metadata"]["exit_code"] == 0
        assert part["state"]["content"].endswith("[exit code 0]")
        assert fake.invalid_count == 0
        assert len(fake.requests) == 2  # the call, then the turn continued once
