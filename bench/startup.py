"""Startup and serving figures for Desk. Prints a table; never passes or fails on time.

- window: from launching `desk` to the first paint of the UI in its window (under a private
  Xvfb), median of N; baseline: a bare pywebview window on the same UI from a service that is
  already running (so the ratio is what desk adds: service start, login redirect, storage).
- service: from launching `desk serve --port 0` to its ready line, median of N; baseline: a
  Python process that imports aiohttp and prints a line.
- requests/s for a hashed asset and for index.html from a local load generator (wrk when
  installed, else an aiohttp client loop; the table says which); baseline: a minimal aiohttp
  handler measured with the same generator.

Run: .venv/bin/python bench/startup.py [--runs 5] [--duration 5]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from desktop.config import web_dist_dir  # noqa: E402
from tests.support.xvfb import start_xvfb, stop_xvfb  # noqa: E402


def desk_argv() -> list[str]:
    script = Path(sys.executable).parent / "desk"
    return [str(script)] if script.exists() else [sys.executable, "-m", "desktop"]


@contextlib.contextmanager
def xvfb() -> Iterator[str]:
    display = start_xvfb()
    try:
        yield display.name
    finally:
        stop_xvfb(display)


def base_env(data_dir: Path, runtime_dir: Path) -> dict[str, str]:
    return {**os.environ, "DESK_DATA_DIR": str(data_dir), "DESK_RUNTIME_DIR": str(runtime_dir)}


def window_env(display: str, data_dir: Path, runtime_dir: Path, probe: Path) -> dict[str, str]:
    env = {
        **base_env(data_dir, runtime_dir),
        "DISPLAY": display,
        "QT_QPA_PLATFORM": "xcb",
        "DESK_WINDOW_PROBE": str(probe),
        "DESK_WINDOW_AUTOCLOSE": "1",
        "DESK_WINDOW_PROBE_TIMEOUT": "20",
        "XDG_CACHE_HOME": str(data_dir.parent / "cache"),
    }
    env.pop("WAYLAND_DISPLAY", None)
    if os.geteuid() == 0:
        env["QTWEBENGINE_CHROMIUM_FLAGS"] = "--no-sandbox"
    return env


def desk_window_first_paint(env: dict[str, str], probe: Path) -> tuple[float, dict[str, object]]:
    probe.unlink(missing_ok=True)
    started = time.time()
    subprocess.run(desk_argv(), env=env, capture_output=True, timeout=120, check=True)
    report = json.loads(probe.read_text())
    painted = report.get("first_paint_epoch_ms")
    if not isinstance(painted, int | float):
        raise RuntimeError(f"the window reported no first paint: {report.get('errors')}")
    return painted - started * 1000, report


BARE_WINDOW = textwrap.dedent(
    """
    import json, sys, webview
    window = webview.create_window("bare", url=sys.argv[1])
    script = (
        "JSON.stringify(performance.timeOrigin + "
        "(performance.getEntriesByName('first-contentful-paint')[0] || {startTime: NaN}).startTime)"
    )
    def probe():
        window.events.loaded.wait(30)
        for _ in range(400):
            value = json.loads(window.run_js(script) or "null")
            if value:
                print(value, flush=True)
                break
            window.events.closed.wait(0.025)
        window.destroy()
    webview.start(probe, gui="qt")
    """
)


def bare_window_first_paint(env: dict[str, str], url: str) -> float:
    """A plain pywebview window on the same UI, served by an already running service."""
    started = time.time()
    done = subprocess.run(
        [sys.executable, "-c", BARE_WINDOW, url],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return float(done.stdout.split()[-1]) - started * 1000


def serve_argv(data_dir: Path, runtime_dir: Path) -> list[str]:
    dirs = ["--data-dir", str(data_dir), "--runtime-dir", str(runtime_dir)]
    return [*desk_argv(), "serve", "--port", "0", *dirs]


def serve_ready_ms(data_dir: Path, runtime_dir: Path) -> float:
    started = time.monotonic()
    process = subprocess.Popen(
        serve_argv(data_dir, runtime_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=base_env(data_dir, runtime_dir),
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    elapsed = (time.monotonic() - started) * 1000
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=10)
    if not line:
        raise RuntimeError("desk serve exited before it was ready")
    return elapsed


def python_ready_ms() -> float:
    started = time.monotonic()
    subprocess.run(
        [sys.executable, "-c", "import aiohttp; print('ready', flush=True)"],
        capture_output=True,
        check=True,
    )
    return (time.monotonic() - started) * 1000


@contextlib.contextmanager
def running_service(data_dir: Path, runtime_dir: Path) -> Iterator[str]:
    process = subprocess.Popen(
        serve_argv(data_dir, runtime_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=base_env(data_dir, runtime_dir),
    )
    assert process.stdout is not None
    try:
        ready = json.loads(process.stdout.readline())
        yield str(ready["url"])
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)


MINIMAL_SERVER = textwrap.dedent(
    """
    import socket, sys
    from aiohttp import web
    async def hello(request):
        return web.Response(body=b"ok", content_type="text/plain")
    app = web.Application()
    app.router.add_get("/", hello)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    print(f"http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
    web.run_app(app, sock=sock, print=None, access_log=None)
    """
)


@contextlib.contextmanager
def minimal_server() -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", MINIMAL_SERVER], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    try:
        yield process.stdout.readline().strip()
    finally:
        process.terminate()
        process.wait(timeout=10)


def wrk_rps(url: str, duration: float) -> float:
    done = subprocess.run(
        ["wrk", "-t1", "-c16", f"-d{duration:.0f}s", url],
        capture_output=True,
        text=True,
        timeout=duration + 60,
        check=True,
    )
    match = re.search(r"Requests/sec:\s+([\d.]+)", done.stdout)
    if not match:
        raise RuntimeError(f"unexpected wrk output: {done.stdout}")
    return float(match.group(1))


async def _client_rps(url: str, duration: float, concurrency: int = 16) -> float:
    import aiohttp

    count = 0
    deadline = time.monotonic() + duration

    async def worker(session: aiohttp.ClientSession) -> None:
        nonlocal count
        while time.monotonic() < deadline:
            async with session.get(url) as response:
                await response.read()
            count += 1

    async with aiohttp.ClientSession() as session:
        started = time.monotonic()
        await asyncio.gather(*(worker(session) for _ in range(concurrency)))
        return count / (time.monotonic() - started)


def rps(url: str, duration: float) -> float:
    if shutil.which("wrk"):
        return wrk_rps(url, duration)
    return asyncio.run(_client_rps(url, duration))


def hashed_asset() -> str:
    assets = sorted((web_dist_dir() / "_assets").glob("*.js"))
    if not assets:
        raise RuntimeError(f"no hashed .js asset under {web_dist_dir()}/_assets")
    return f"/_assets/{assets[0].name}"


Row = tuple[str, str, str, str, str]


def figure(values: list[float], unit: str) -> str:
    return f"{statistics.median(values):.0f} {unit} ({min(values):.0f}-{max(values):.0f})"


def ratio(value: float, baseline: float) -> str:
    return f"{value / baseline:.2f}x" if baseline else "-"


def kill_leftovers(data_dir: Path) -> None:
    """Kill anything still running for `data_dir` (a PTY host the UI started, for one)."""
    needle = f"DESK_DATA_DIR={data_dir}".encode() + b"\0"
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            if needle in b"\0" + (entry / "environ").read_bytes():
                os.kill(int(entry.name), signal.SIGKILL)


def bench_window(runs: int, tmp: Path) -> list[Row]:
    data, runtime, probe = tmp / "window-data", Path(tempfile.mkdtemp(prefix="desk-b-")), tmp / "p"
    with xvfb() as display:
        env = window_env(display, data, runtime, probe)
        cold, report = desk_window_first_paint(env, probe)
        warm = [desk_window_first_paint(env, probe)[0] for _ in range(runs)]
        with running_service(tmp / "bare-data", runtime) as url:
            bare = [bare_window_first_paint(env, url + "/") for _ in range(runs)]
    kill_leftovers(data)
    kill_leftovers(tmp / "bare-data")
    shutil.rmtree(runtime, ignore_errors=True)
    note = "connected" if report.get("connected") else "UI did not report connected"
    return [
        ("desk -> first paint (first run)", f"{cold:.0f} ms", "", "", note),
        (
            f"desk -> first paint (median of {runs})",
            figure(warm, "ms"),
            figure(bare, "ms"),
            ratio(statistics.median(warm), statistics.median(bare)),
            "baseline: bare pywebview window, same UI, service already up",
        ),
    ]


def bench_serve(runs: int, tmp: Path) -> list[Row]:
    data, runtime = tmp / "serve-data", Path(tempfile.mkdtemp(prefix="desk-b-"))
    ready = [serve_ready_ms(data, runtime) for _ in range(runs)]
    python = [python_ready_ms() for _ in range(runs)]
    shutil.rmtree(runtime, ignore_errors=True)
    return [
        (
            f"desk serve -> ready line (median of {runs})",
            figure(ready, "ms"),
            figure(python, "ms"),
            ratio(statistics.median(ready), statistics.median(python)),
            "baseline: python -c 'import aiohttp'",
        )
    ]


def bench_requests(duration: float, tmp: Path) -> list[Row]:
    generator = "wrk -t1 -c16" if shutil.which("wrk") else "aiohttp client loop, 16 concurrent"
    data, runtime = tmp / "rps-data", Path(tempfile.mkdtemp(prefix="desk-b-"))
    with minimal_server() as base_url:
        baseline = rps(base_url + "/", duration)
    with running_service(data, runtime) as url:
        asset = rps(url + hashed_asset(), duration)
        index = rps(url + "/index.html", duration)
    shutil.rmtree(runtime, ignore_errors=True)
    base = f"{baseline:.0f} req/s"
    return [
        ("hashed asset", f"{asset:.0f} req/s", base, ratio(asset, baseline), generator),
        ("index.html", f"{index:.0f} req/s", base, ratio(index, baseline), generator),
    ]


def print_table(rows: list[Row]) -> None:
    header: Row = ("measure", "value (min-max)", "baseline", "ratio", "notes")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(5)]
    for row in [header, tuple("-" * width for width in widths), *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per median (default 5)")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per load test")
    args = parser.parse_args()
    if args.runs < 1 or args.duration <= 0:
        parser.error("--runs must be >= 1 and --duration > 0")
    with tempfile.TemporaryDirectory(prefix="desk-bench-") as raw:
        tmp = Path(raw)
        rows = bench_window(args.runs, tmp) + bench_serve(args.runs, tmp)
        rows += bench_requests(args.duration, tmp)
    print_table(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
