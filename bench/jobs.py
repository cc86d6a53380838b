"""What running a command as a PTY host job costs. Prints a table; never passes or fails.

- baseline: `bash -c true` as a child of this process (asyncio subprocess, wait for exit);
- job: `true` through the job path (ShellJobs.start_job, wait_job, job_result: a PTY, the
  user's shell with `-c`, the exit seen by the host, the output fetched and cleaned);
- tool: the same through the `shell` tool (argument checks, cwd confinement in a thread);
- terminal: a plain PTY host terminal running /bin/true, from `create` to its `exited`
  event: the share of the job's time that is the PTY spawn itself, not the job layer.

Each is the median of N runs in the same process against the same private PTY host; the
ratio is to the baseline.

Run: .venv/bin/python bench/jobs.py [--runs 50]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from pathlib import Path
from typing import cast

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from desktop.config import load_settings  # noqa: E402
from desktop.jobs.host import ShellJobs  # noqa: E402
from desktop.tools.base import run_tool  # noqa: E402
from desktop.tools.shell import ShellContext, ShellTool  # noqa: E402

SESSION = "ses_bench"


async def median_ms(runs: int, once: Callable[[], Awaitable[None]]) -> float:
    await once()  # warm-up
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        await once()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


async def main(runs: int) -> None:
    base = Path(tempfile.mkdtemp(prefix="desk-bj-", dir="/tmp"))
    os.environ["DESK_DATA_DIR"] = str(base / "data")
    os.environ["DESK_RUNTIME_DIR"] = str(base / "run")
    workspace = base / "ws"
    workspace.mkdir()
    settings = load_settings()
    settings.ensure_dirs()
    jobs = ShellJobs.for_settings(settings)
    calls = itertools.count()
    tool = ShellTool(jobs)
    try:

        async def bash() -> None:
            process = await asyncio.create_subprocess_exec("bash", "-c", "true")
            await process.wait()

        async def job() -> None:
            state = await jobs.start_job(SESSION, f"job_{next(calls)}", "true", str(workspace))
            await jobs.wait_job(state.key)
            result = await jobs.job_result(state.key)
            assert result.exit_code == 0, result

        async def through_tool() -> None:
            ctx = ShellContext(root=workspace, session_id=SESSION, call_id=f"t_{next(calls)}")
            result = await run_tool(tool, {"command": "true"}, ctx)
            assert result.output == "(no output)\n[exit code 0]", result.output

        client = await jobs._connect()

        async def terminal() -> None:
            events = cast(AsyncGenerator[dict[str, object], None], client.events())
            pending = asyncio.ensure_future(anext(events))
            await asyncio.sleep(0)  # subscribed before the terminal can exit
            info = await client.create({"command": "/bin/true", "cwd": str(workspace)})
            while True:
                event = await pending
                if event.get("event") == "exited" and event.get("id") == info["id"]:
                    break
                pending = asyncio.ensure_future(anext(events))
            await events.aclose()
            await client.delete(str(info["id"]))

        baseline = await median_ms(runs, bash)
        terminal_ms = await median_ms(runs, terminal)
        job_ms = await median_ms(runs, job)
        tool_ms = await median_ms(runs, through_tool)
        await jobs.remove_session_jobs(SESSION)
        print(f"`true`, median of {runs} runs (same PTY host, same process)")
        print(f"{'path':<40}{'ms':>9}{'ratio':>9}")
        for name, value in (
            ("bash -c true (child process)", baseline),
            ("PTY terminal /bin/true (create..exit)", terminal_ms),
            ("job: start + wait + result", job_ms),
            ("shell tool (run_tool)", tool_ms),
        ):
            print(f"{name:<40}{value:>9.2f}{value / baseline:>8.2f}x")
    finally:
        client = await jobs._connect()
        await client.shutdown(save=False)
        await jobs.close()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    asyncio.run(main(parser.parse_args().runs))
