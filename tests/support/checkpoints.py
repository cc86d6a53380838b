"""Helpers of the checkpoint tests: a project folder with a real .git, checksums of its
files, and a `desk serve` process driven over HTTP (it can be killed with -9)."""

from __future__ import annotations

import asyncio
import hashlib
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import aiohttp

from tests.support.serve_process import READY_DEADLINE, spawn_serve
from tests.support.wait import wait_for

DEADLINE = 30.0


def make_project(root: Path) -> Path:
    """A git repository with a few files (one executable) and a .gitignore'd build folder."""
    root.mkdir()
    (root / "a.txt").write_text("alpha\nbeta\ngamma\n")
    (root / "gone.txt").write_text("to be deleted\n")
    (root / "run.sh").write_text("#!/bin/sh\necho run\n")
    (root / "run.sh").chmod(0o755)
    (root / "logo.bin").write_bytes(bytes(range(256)))
    (root / ".gitignore").write_text("build/\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "i"],
        check=True,
    )
    return root


def tree_sums(root: Path) -> dict[str, tuple[str, int]]:
    """Every file outside .git and build/: checksum and mode."""
    out: dict[str, tuple[str, int]] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".git", "build")]
        for name in files:
            path = Path(folder, name)
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            out[path.relative_to(root).as_posix()] = (digest, path.stat().st_mode)
    return out


def git_dir_sums(root: Path) -> dict[str, str]:
    """The project's own .git, every file's checksum (it must never change)."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((root / ".git").rglob("*"))
        if p.is_file()
    }


class Response:
    def __init__(self, status: int, body: Any) -> None:
        self.status = status
        self.body = body

    @property
    def data(self) -> Any:
        assert self.status < 300, (self.status, self.body)
        return self.body["data"]

    @property
    def error(self) -> str:
        return str(self.body["error"]["type"])


class Service:
    """A `desk serve` process of the test's data dir."""

    def __init__(self, process: asyncio.subprocess.Process, ready: dict[str, Any]) -> None:
        self.process = process
        self.url = str(ready["url"])
        self.headers = {"Authorization": f"Bearer {ready['token']}"}

    async def call(self, method: str, path: str, body: Any = None) -> Response:
        async with (
            aiohttp.ClientSession(headers=self.headers) as http,
            http.request(method, self.url + path, json=body) as response,
        ):
            return Response(response.status, await response.json())

    async def get(self, path: str) -> Any:
        return (await self.call("GET", path)).data

    async def post(self, path: str, body: Any = None) -> Any:
        return (await self.call("POST", path, body if body is not None else {})).data

    async def kill(self) -> None:
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGKILL)
        await asyncio.wait_for(self.process.wait(), DEADLINE)

    async def idle(self, sid: str) -> dict[str, Any]:
        """The session once it is no longer busy."""

        async def not_busy() -> dict[str, Any] | None:
            session = await self.get(f"/api/session/{sid}")
            return dict(session) if session["status"] != "busy" else None

        return await wait_for(not_busy, DEADLINE, "the turn ended", 0.02)  # type: ignore[no-any-return]

    async def turn(self, sid: str, text: str) -> str:
        """Prompt and wait for the turn's end; the user message id."""
        before = await self.ended(sid)
        mid = (await self.post(f"/api/session/{sid}/prompt", {"text": text}))["message_id"]

        async def over() -> bool:
            if await self.ended(sid) == before:
                return False
            return bool((await self.get(f"/api/session/{sid}"))["status"] != "busy")

        await wait_for(over, DEADLINE, "the turn ended", 0.02)
        return str(mid)

    async def ended(self, sid: str) -> int:
        events = await self.get(f"/api/session/{sid}/log")
        return sum(e["type"] in ("session.step.ended", "session.step.failed") for e in events)

    async def messages(self, sid: str) -> list[dict[str, Any]]:
        return list(await self.get(f"/api/session/{sid}/message?limit=200"))


async def start(log: Path, ready_within: float = READY_DEADLINE) -> Service:
    return Service(*await spawn_serve(log, ready_within))
