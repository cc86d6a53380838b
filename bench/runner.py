"""What the runner costs on the stream and between steps. Prints figures; never fails.

- deltas/s, bare: the strict fake streams N text chunks to a bare aiohttp client that
  splits SSE lines (the floor: HTTP + framing only);
- deltas/s, end to end: the same N chunks (counted by the text they carry: the service
  sends the deltas of one network read as one event) through the service (provider client, runner,
  ephemeral delta events, fan-out) to an SSE client on /api/event, counted until the
  step's durable `session.step.ended` arrives. Target: >= 0.5x bare. The service is a real
  `desk serve` in its own process, as it runs for a person; the fake and the client share
  this process in both figures, so the ratio is what the service in between costs.
- per-step overhead: a step with 10 tool calls (`glob` on a tiny folder); time from the
  provider's last byte of that step to the arrival of the next request (lower, preflight,
  10 durable tool results, step end, next step start). Median of R runs. Target < 20 ms.
- the shell tool's own overhead against `bash -c true` is bench/jobs.py's (same job path).

Run: .venv/bin/python bench/runner.py [--deltas 2000] [--runs 15]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
from aiohttp import web

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from desktop.process.liveness import is_alive  # noqa: E402
from tests.support.fake_provider import (  # noqa: E402
    Call,
    FakeProvider,
    Reply,
    text_reply,
    tool_call_reply,
)
from tests.support.service import Service  # noqa: E402


def stop_pty_host(service: Service) -> None:
    """The PTY host outlives the service by design: end it with the run."""
    pid = service.pty_host_pid()
    if pid is not None and is_alive(pid):
        os.kill(pid, signal.SIGTERM)


class TimedFake(FakeProvider):
    """Records when each request arrived and when its reply's last byte was written."""

    def __init__(self) -> None:
        super().__init__()
        self.arrived: list[float] = []
        self.finished: list[float] = []
        self.replied = asyncio.Event()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.arrived.append(time.perf_counter())
        response = await super()._handle(request)
        self.finished.append(time.perf_counter())
        self.replied.set()
        return response


def many_deltas(n: int) -> Reply:
    return text_reply(*(f"w{i} " for i in range(n)))


async def bare(fake: FakeProvider, n: int) -> float:
    fake.script(many_deltas(n))
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "x"}]}
    started = time.perf_counter()
    count = 0
    async with (
        aiohttp.ClientSession() as http,
        http.post(fake.base_url + "/chat/completions", json=body) as response,
    ):
        buffer = b""
        async for chunk in response.content.iter_any():
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            count += sum(1 for line in lines if line.startswith(b"data: {"))
    return count / (time.perf_counter() - started)


async def end_to_end(url: str, token: str, fake: FakeProvider, folder: str, n: int) -> float:
    headers = {"Authorization": f"Bearer {token}"}
    fake.script(many_deltas(n))
    async with aiohttp.ClientSession(headers=headers) as http:
        created = await (await http.post(url + "/api/session", json={"directory": folder})).json()
        sid = created["data"]["id"]
        async with http.get(url + "/api/event", timeout=aiohttp.ClientTimeout(total=None)) as sse:
            await sse.content.readline()
            started = time.perf_counter()
            await http.post(f"{url}/api/session/{sid}/prompt", json={"text": "go"})
            count = 0
            buffer = b""
            async for chunk in sse.content.iter_any():
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if b'"session.text.delta"' in line:
                        # Deltas read in one burst travel as one event: count the chunks
                        # it carries (each of the fake's chunks ends in one space).
                        count += json.loads(line[6:])["properties"]["data"]["delta"].count(" ")
                    elif b'"session.step.ended"' in line:
                        return count / (time.perf_counter() - started)
    # The fan-out drops a subscriber that falls too far behind (server.resync).
    raise AssertionError(f"the SSE stream ended after {count} deltas (resync?)")


async def step_overhead(
    url: str, token: str, fake: TimedFake, folder: str, runs: int
) -> list[float]:
    headers = {"Authorization": f"Bearer {token}"}
    gaps = []
    async with aiohttp.ClientSession(headers=headers) as http:
        for run in range(runs):
            calls = [Call(f"call_{run}_{i}", "glob", {"pattern": "*.txt"}) for i in range(10)]
            fake.script(tool_call_reply(*calls), text_reply("ok"))
            created = await (
                await http.post(url + "/api/session", json={"directory": folder})
            ).json()
            sid = created["data"]["id"]
            before = len(fake.arrived)
            await http.post(f"{url}/api/session/{sid}/prompt", json={"text": "go"})
            while len(fake.finished) < before + 2:
                fake.replied.clear()
                await fake.replied.wait()
            gaps.append((fake.arrived[before + 1] - fake.finished[before]) * 1000)
    return gaps


async def main(n: int, runs: int) -> None:
    base = Path(tempfile.mkdtemp(prefix="desk-br-", dir="/tmp"))
    folder = base / "ws"
    folder.mkdir()
    (folder / "a.txt").write_text("a\n")
    service = Service(data_dir=base / "data", runtime_dir=base / "run")
    service.runtime_dir.mkdir(mode=0o700, parents=True)
    fake = TimedFake()
    await fake.start()
    try:
        await asyncio.to_thread(service.start)
        try:
            provider = {"provider": "openai-compatible", "base_url": fake.base_url, "model": "m"}
            await asyncio.to_thread(service.request, "PUT", "/api/config/provider", provider)
            url, token = service.url, service.token
            bare_rates = [await bare(fake, n) for _ in range(3)]
            e2e_rates = [await end_to_end(url, token, fake, str(folder), n) for _ in range(3)]
            gaps = await step_overhead(url, token, fake, str(folder), runs)
        finally:
            await asyncio.to_thread(service.stop)
            await asyncio.to_thread(stop_pty_host, service)
    finally:
        await fake.close()
        shutil.rmtree(base, ignore_errors=True)
    b, e = statistics.median(bare_rates), statistics.median(e2e_rates)
    print(f"deltas/s bare client      : {b:10.0f}  (median of 3, {n} deltas)")
    print(f"deltas/s end to end (SSE) : {e:10.0f}  ratio {e / b:.2f}x (target >= 0.5x)")
    print(
        f"step overhead, 10 tools   : median {statistics.median(gaps):.1f} ms, "
        f"min {min(gaps):.1f}, max {max(gaps):.1f} (target < 20 ms, {runs} runs)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--deltas", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    asyncio.run(main(args.deltas, args.runs))
