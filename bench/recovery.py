"""Restart-recovery figures. Prints a table; never passes or fails on time.

- start-up: from launching `desk serve --port 0` to its ready line (recovery runs before it)
  on a database with N suspended root sessions and N owed background jobs (shell
  jobs whose PTY host jobs are gone: each becomes a "cancelled because the server restarted"
  notice), median of R runs, against the same start on an empty database in the same run.
  No provider is configured, so each resumed turn ends at once with a durable error.
- kill -9 -> first resumed step: a turn streams from the strict fake provider and is held
  mid-answer; the service is killed with SIGKILL and started again; the time from the kill
  to the fake receiving the resumed step's request, median of R, against the bare restart
  (kill to ready line) in the same run.

Run: .venv/bin/python bench/recovery.py [--sessions 1000] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from desktop.events.bus import apply, draft  # noqa: E402
from desktop.jobs.model import Job, ShellRecovery  # noqa: E402
from desktop.jobs.model import write as write_jobs  # noqa: E402
from desktop.store import sessions as q  # noqa: E402
from desktop.store.db import Store  # noqa: E402
from tests.support.fake_provider import FakeProvider, text_reply  # noqa: E402


def env_for(root: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DESK_")}
    env["DESK_DATA_DIR"] = str(root / "data")
    env["DESK_RUNTIME_DIR"] = str(root / "run")
    env.update(extra or {})
    return env


def launch(env: dict[str, str]) -> tuple[subprocess.Popen[str], float, str]:
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "desktop", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=PROJECT,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line, "desk serve exited"
    return proc, time.perf_counter() - started, line


def kill(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


def stop_host(root: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "desktop", "service", "stop", "--all"],
        env=env_for(root),
        cwd=PROJECT,
        capture_output=True,
        timeout=30,
    )


def populate(root: Path, n: int) -> None:
    (root / "data").mkdir(parents=True, exist_ok=True)
    store = Store(root / "data" / "desk.sqlite3")
    store._open()
    conn = store.connection()
    with store.db.atomic():
        apply(
            conn,
            [
                draft(f"ses_b{i}", "session.created", {"title": f"s{i}", "directory": "/"})
                for i in range(n)
            ],
        )
        for i in range(n):
            q.claim(conn, f"ses_b{i}", 1)
        write_jobs(
            conn,
            [
                Job.recovered(
                    f"job:ses_b{i}:call_{i}",
                    f"msg_bench{i}",
                    ShellRecovery(f"ses_b{i}", f"call_{i}", f"job:ses_b{i}:call_{i}", "sleep 60"),
                    "running",
                )
                for i in range(n)
            ],
        )
    store.db.close()


def startup(n: int, runs: int) -> tuple[float, float, int]:
    empty: list[float] = []
    full: list[float] = []
    left = 0
    for _ in range(runs):
        for count, out in ((0, empty), (n, full)):
            root = Path(tempfile.mkdtemp(prefix="desk-bench-", dir="/tmp"))
            try:
                populate(root, count)
                proc, took, _ = launch(env_for(root))
                out.append(took)
                kill(proc)
                if count:
                    conn = Store(root / "data" / "desk.sqlite3")
                    conn._open()
                    left = int(
                        conn.connection()
                        .execute("SELECT COUNT(*) FROM job WHERE owed = 1")
                        .fetchone()[0]
                    )
                    conn.db.close()
            finally:
                stop_host(root)
                shutil.rmtree(root, ignore_errors=True)
    return statistics.median(empty), statistics.median(full), left


async def resumed_step(runs: int) -> tuple[float, float]:
    to_step: list[float] = []
    to_ready: list[float] = []
    import aiohttp

    for _ in range(runs):
        root = Path(tempfile.mkdtemp(prefix="desk-bench-", dir="/tmp"))
        gate = asyncio.Event()
        try:
            async with FakeProvider() as fake:
                held = text_reply("part one", "part two")
                held.gate, held.gate_after = gate, 2
                fake.script(held, text_reply("resumed"))
                env = env_for(
                    root,
                    {
                        "DESK_PROVIDER": "openai-compatible",
                        "DESK_BASE_URL": fake.base_url,
                        "DESK_MODEL": "fake-model",
                        "DESK_API_KEY": "sk-bench",
                    },
                )
                proc, _, line = await asyncio.to_thread(launch, env)
                ready = json.loads(line)
                headers = {"Authorization": f"Bearer {ready['token']}"}
                async with aiohttp.ClientSession(headers=headers) as http:
                    async with http.post(ready["url"] + "/api/session", json={}) as r:
                        sid = (await r.json())["data"]["id"]
                    async with http.post(
                        ready["url"] + f"/api/session/{sid}/prompt", json={"text": "go"}
                    ):
                        pass
                # The fake records requests in a list; polling it at 2-5 ms is the timer here.
                while len(fake.requests) < 1:  # noqa: ASYNC110
                    await asyncio.sleep(0.005)
                await asyncio.sleep(0.2)  # let the held answer stream its first chunks
                killed = time.perf_counter()
                await asyncio.to_thread(kill, proc)
                seen = len(fake.requests)
                successor, _, _ = await asyncio.to_thread(launch, env)
                to_ready.append(time.perf_counter() - killed)
                while len(fake.requests) <= seen:  # noqa: ASYNC110
                    await asyncio.sleep(0.002)
                to_step.append(time.perf_counter() - killed)
                gate.set()
                await asyncio.to_thread(kill, successor)
        finally:
            stop_host(root)
            shutil.rmtree(root, ignore_errors=True)
    return statistics.median(to_ready), statistics.median(to_step)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    empty, full, left = startup(args.sessions, args.runs)
    ready, step = asyncio.run(resumed_step(args.runs))
    n = args.sessions
    print(f"{'figure':58} {'median':>9} {'baseline':>9} {'ratio':>7}")
    print(
        f"{'start-up, ' + str(n) + ' suspended + ' + str(n) + ' owed jobs (vs empty db)':58} "
        f"{full * 1000:8.0f}ms {empty * 1000:8.0f}ms {full / empty:6.2f}x"
    )
    print(f"{'  owed jobs left after start (each noticed once)':58} {left:>9}")
    print(
        f"{'kill -9 -> first resumed step (vs kill -> ready line)':58} "
        f"{step * 1000:8.0f}ms {ready * 1000:8.0f}ms {step / ready:6.2f}x"
    )


if __name__ == "__main__":
    main()
