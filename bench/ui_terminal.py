"""Browser-side terminal figures for the web UI.

Starts `desk serve` in temporary dirs and bench/onehop.py with the bare xterm.js page
(bench/pages/bare-xterm.html: Desk's xterm.js version, options and addons, on the one-hop
server, the shape of ttyd), opens both in headless Chromium (Debian's) and prints, for both
pages in interleaved rounds (Desk, bare, Desk, bare...), with medians and Desk/bare ratios:
- flood rendering: MB/s from the Enter of a `yes | head -c` flood to the render showing its
  end marker;
- keystroke-to-paint latency (keydown to the xterm render that shows the echo), p50/p99,
  typed in the terminal that just flooded (its 10,000-line scrollback full).
With `--ttyd PATH` (a ttyd binary; bench/ttyd_peer.py says how to build one), ttyd's own page
and server join the rounds as a third page, as shipped (its renderer, font and 1,000-line
scrollback), on the same grid.
Then, for Desk alone:
- throughput: MB/s that xterm.js parses and renders from a 50 MB flood (`yes | head -c`),
  acks included, in the visible tab and in a background tab, against a baseline measured in
  the same run: the same flood read by a plain WebSocket client that acks at once and renders
  nothing (the service + PTY host pipeline alone);
- keystroke-to-paint latency (keydown to the xterm render that shows the echo, measured in
  the page), p50/p99, idle and while another tab floods.

Usage: .venv/bin/python bench/ui_terminal.py [--mb 50] [--keys 60] [--rounds 3] [--ttyd PATH]
Prints figures; never asserts on time.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from ttyd_peer import Ttyd  # noqa: E402

from desktop.process.liveness import is_alive  # noqa: E402
from tests.support.chromium import CHROMIUM_ARGS  # noqa: E402

SHELL = {"command": "bash", "args": ["--norc", "--noprofile"], "env": {"PS1": "$ "}}


class Service:
    def __init__(self) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="desk-uibench-", dir="/tmp"))
        # Test hooks on: the page's window.__desk, which the bench reads, loads only then.
        env = dict(os.environ, DESK_RUNTIME_DIR=str(self.base / "run"), DESK_TEST_HOOKS="1")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "desktop",
                "serve",
                "--port",
                "0",
                "--data-dir",
                str(self.base / "data"),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdout is not None
        ready = json.loads(self.process.stdout.readline())
        self.url: str = ready["url"]
        self.token: str = ready["token"]

    def request(self, method: str, path: str, body: object | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Authorization", f"Bearer {self.token}")
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=30) as response:
            raw = response.read()
        return json.loads(raw)["data"] if raw else None

    def close(self) -> None:
        host_pid = None
        with contextlib.suppress(OSError, ValueError, KeyError):
            host_pid = json.loads((self.base / "run" / "pty-host.json").read_text())["pid"]
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(10)
        if isinstance(host_pid, int):
            # The PTY host outlives the service by design: end it (and its shells) too.
            with contextlib.suppress(ProcessLookupError):
                os.kill(host_pid, signal.SIGTERM)
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and is_alive(host_pid):
                time.sleep(0.05)
            with contextlib.suppress(ProcessLookupError):
                os.kill(host_pid, signal.SIGKILL)
        shutil.rmtree(self.base, ignore_errors=True)


def flood_command(megabytes: int, marker: str) -> str:
    return f"yes | head -c {megabytes * 1_000_000}; echo {marker}-$((1+1))"


async def baseline_flood(service: Service, pty_id: str, megabytes: int) -> float:
    """Seconds for a plain WebSocket client (immediate acks, no rendering) to get the flood."""
    marker = b"base-2"
    headers = {"Authorization": f"Bearer {service.token}"}
    info = service.request("GET", f"/api/pty/{pty_id}")
    cursor = info["output"]["tail"]
    url = f"{service.url}/api/pty/{pty_id}/connect?cursor={cursor}&attachment_id=bench-baseline"
    async with aiohttp.ClientSession(headers=headers) as session, session.ws_connect(url) as ws:
        while True:
            message = await ws.receive()
            if message.type == aiohttp.WSMsgType.TEXT:
                if json.loads(message.data).get("type") == "replay_complete":
                    break
            elif message.type != aiohttp.WSMsgType.BINARY:
                raise RuntimeError(f"socket ended: {message.type}")
        await ws.send_bytes((flood_command(megabytes, "base") + "\r").encode())
        start = time.perf_counter()
        tail = b""
        while True:
            message = await ws.receive()
            if message.type == aiohttp.WSMsgType.BINARY:
                data: bytes = message.data
                await ws.send_str(json.dumps({"type": "ack", "bytes": len(data)}))
                tail = (tail + data)[-64:]
                if marker + b"\r\n" in tail:
                    return time.perf_counter() - start
            elif message.type != aiohttp.WSMsgType.TEXT:
                raise RuntimeError(f"socket ended: {message.type}")


# In-page: ms from the Enter keydown to the render after the marker line was parsed.
# Wrapped in an object: evaluate_handle would otherwise wait for the promise.
FLOOD_TIMER = (
    "([id, marker]) => ({ done: window.__desk.echoLatency(id, marker,"
    " { key: 'Enter', above: 2, timeoutMs: 600000 }) })"
)


def wait_for(page: Page, expression: str, arg: object = None, timeout_ms: int = 30000) -> None:
    page.wait_for_function(expression, arg=arg, timeout=timeout_ms)


def attach_ui(page: Page, service: Service, count: int) -> None:
    page.goto(f"{service.url}/?token={service.token}")
    wait_for(
        page,
        "(n) => window.__desk && window.__desk.terminals().filter((t) => t.phase === 'live')"
        ".length === n",
        count,
    )


def activate(page: Page, pty_id: str) -> None:
    page.evaluate("(id) => window.__desk.activate(id)", pty_id)
    page.locator(f"#pane-{pty_id} .xterm").click()


def ui_flood(page: Page, pty_id: str, megabytes: int, marker: str) -> float:
    timer = page.evaluate_handle(FLOOD_TIMER, [pty_id, f"{marker}-2"])
    page.keyboard.type(flood_command(megabytes, marker))
    page.keyboard.press("Enter")
    seconds = float(page.evaluate("(p) => p.done", timer)) / 1000
    timer.dispose()
    page.keyboard.press("Control+l")
    return seconds


def keystroke_latencies(page: Page, pty_id: str, keys: int) -> list[float]:
    samples = []
    for i in range(keys):
        char = "abcdefghijklmnopqrstuvwxyz"[i % 26]
        # Wrapped in an object: evaluate_handle would otherwise wait for the promise.
        probe = page.evaluate_handle(
            "([id, c]) => ({ done: window.__desk.echoLatency(id, c) })", [pty_id, char]
        )
        page.keyboard.press(char)
        samples.append(float(page.evaluate("(p) => p.done", probe)))
        probe.dispose()
        if i % 20 == 19:
            page.keyboard.press("Control+u")  # keep the line short
    page.keyboard.press("Control+u")
    return samples


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class BarePage:
    """bench/onehop.py serving the bare xterm.js page (bench/pages/bare-xterm.html)."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "bench" / "onehop.py"), "--page", str(BARE_PAGE)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdout is not None
        self.url = str(json.loads(self.process.stdout.readline())["url"])

    def open(self, page: Page, cols: int, rows: int) -> None:
        query = urllib.parse.urlencode(
            {"command": "exec bash --norc --noprofile", "cols": cols, "rows": rows}
        )
        page.goto(f"{self.url}/?{query}")
        wait_for(page, "() => window.__desk && window.__desk.terminals()[0].phase === 'live'")

    def close(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(10)


BARE_PAGE = ROOT / "bench" / "pages" / "bare-xterm.html"
BARE_ID = "bare"
ECHO_PROBE = ROOT / "bench" / "pages" / "echo-latency.js"
TTYD_ID = "ttyd"
# window.__desk on ttyd's page, over the `window.term` it exposes: the grid set to Desk's, and
# its terminal's container named as the other pages name theirs (#pane-<id>), for the clicks.
TTYD_HOOKS = """([id, cols, rows]) => {
  const term = window.term
  term.resize(cols, rows)
  term.element.parentElement.id = "pane-" + id
  // A canvas that refuses a 2d context holds WebGL's (the canvases are set up by now).
  const canvases = [...term.element.querySelectorAll("canvas")]
  const webgl = canvases.some((canvas) => canvas.getContext("2d") === null)
  const renderer = webgl ? "webgl" : canvases.length ? "canvas" : "dom"
  window.__desk = Object.freeze({
    terminals: () => [
      { id, phase: "live", renderer, cols: term.cols, rows: term.rows, active: true },
    ],
    activate: () => term.focus(),
    echoLatency: (_, text, options) => window.benchEchoLatency(term, text, options),
  })
}"""


class TtydPage:
    """ttyd's server and page, running bash as the other pages do."""

    def __init__(self, binary: Path) -> None:
        self.server = Ttyd(binary, ["bash", "--norc", "--noprofile"], {"PS1": "$ "})

    def open(self, page: Page, cols: int, rows: int) -> None:
        page.goto(self.server.url + "/")
        # Connected once the shell's prompt is on screen.
        wait_for(
            page,
            "() => window.term && window.term.buffer.active.getLine(0)"
            "?.translateToString(true).startsWith('$')",
        )
        page.add_script_tag(path=str(ECHO_PROBE))
        page.evaluate(TTYD_HOOKS, [TTYD_ID, cols, rows])

    def close(self) -> None:
        self.server.stop()


@dataclass
class Figures:
    """One page's figures over the rounds: flood seconds and keystroke-to-paint samples."""

    floods: list[float] = field(default_factory=list)
    keys: list[list[float]] = field(default_factory=list)

    def rate(self, megabytes: int) -> float:
        return megabytes / statistics.median(self.floods)

    def pooled(self) -> list[float]:
        return [sample for round_ in self.keys for sample in round_]


def measure_round(page: Page, pty_id: str, args: argparse.Namespace, into: Figures) -> None:
    """One flood, then keystrokes in the same terminal (its scrollback full, as after use)."""
    page.bring_to_front()
    activate(page, pty_id)
    into.floods.append(ui_flood(page, pty_id, args.mb, "shown"))
    into.keys.append(keystroke_latencies(page, pty_id, args.keys))


def side_by_side(pages: dict[str, Figures], megabytes: int) -> None:
    """One column per page (Desk first), then Desk's ratio to each of the others."""
    figures: list[tuple[str, Callable[[Figures], float]]] = [
        ("flood rendered, MB/s (median)", lambda f: f.rate(megabytes)),
        ("keystroke-to-paint p50, ms", lambda f: statistics.median(f.pooled())),
        ("keystroke-to-paint p99, ms", lambda f: percentile(f.pooled(), 0.99)),
    ]
    desk, *peers = pages
    header = f"{'figure':<34}" + "".join(f"{name:>9}" for name in pages)
    print(header + "".join(f"{'desk/' + name:>11}" for name in peers))
    for label, measure in figures:
        values = {name: measure(figures_) for name, figures_ in pages.items()}
        line = f"{label:<34}" + "".join(f"{value:>9.2f}" for value in values.values())
        print(line + "".join(f"{values[desk] / values[name]:>11.2f}" for name in peers))
    for name, figures_ in pages.items():
        floods = " ".join(f"{megabytes / seconds:.2f}" for seconds in figures_.floods)
        p50s = " ".join(f"{statistics.median(samples):.1f}" for samples in figures_.keys)
        print(f"  per round, {name}: flood MB/s {floods}; keystroke p50 ms {p50s}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=50, help="flood size in MB")
    parser.add_argument("--keys", type=int, default=60, help="keystrokes per latency run")
    parser.add_argument(
        "--rounds", type=int, default=3, help="interleaved rounds of Desk and the peer pages"
    )
    parser.add_argument(
        "--ttyd",
        type=Path,
        default=shutil.which("ttyd"),
        help="a ttyd binary whose page joins the rounds (default: ttyd on PATH)",
    )
    args = parser.parse_args()
    if not (ROOT / "web" / "dist" / "index.html").is_file():
        print("web/dist is missing: run `cd web && npm ci && npm run build` first")
        return 2
    service = Service()
    bare_server = BarePage()
    ttyd_server = TtydPage(args.ttyd) if args.ttyd is not None else None
    desk, bare, ttyd = Figures(), Figures(), Figures()
    try:
        ids = [
            service.request("POST", "/api/pty", {**SHELL, "title": f"bench-{n}"})["id"]
            for n in range(3)
        ]
        baseline_id = service.request("POST", "/api/pty", {**SHELL, "title": "baseline"})["id"]
        baseline = asyncio.run(baseline_flood(service, baseline_id, args.mb))
        service.request("DELETE", f"/api/pty/{baseline_id}")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS
            )
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            attach_ui(page, service, 3)
            visible, hidden, typing = ids
            shown = page.evaluate(
                "(id) => window.__desk.terminals().find((t) => t.id === id)", visible
            )
            # The same grid in both pages, so each frame paints the same number of cells.
            bare_page = browser.new_page(viewport={"width": 1280, "height": 800})
            bare_server.open(bare_page, int(shown["cols"]), int(shown["rows"]))
            bare_info = bare_page.evaluate("() => window.__desk.terminals()[0]")
            ttyd_page = None
            if ttyd_server is not None:
                ttyd_page = browser.new_page(viewport={"width": 1280, "height": 800})
                ttyd_server.open(ttyd_page, int(shown["cols"]), int(shown["rows"]))
                ttyd_info = ttyd_page.evaluate("() => window.__desk.terminals()[0]")

            for round_ in range(args.rounds):
                print(f"round {round_ + 1}/{args.rounds}", file=sys.stderr, flush=True)
                measure_round(page, visible, args, desk)
                measure_round(bare_page, BARE_ID, args, bare)
                if ttyd_page is not None:
                    measure_round(ttyd_page, TTYD_ID, args, ttyd)

            # Desk alone: a background tab's flood, and typing in another tab meanwhile.
            page.bring_to_front()
            activate(page, typing)
            idle = keystroke_latencies(page, typing, args.keys)
            activate(page, hidden)
            timer = page.evaluate_handle(FLOOD_TIMER, [hidden, "hidden-2"])
            page.keyboard.type(flood_command(args.mb, "hidden"))
            page.keyboard.press("Enter")
            activate(page, typing)
            busy = keystroke_latencies(page, typing, args.keys)
            background = float(page.evaluate("(p) => p.done", timer)) / 1000
            browser.close()
    finally:
        bare_server.close()
        if ttyd_server is not None:
            ttyd_server.close()
        service.close()

    mb = args.mb
    print(
        f"renderer: desk {shown['renderer']}, bare {bare_info['renderer']}; "
        f"grid {bare_info['cols']}x{bare_info['rows']} in both; {args.rounds} rounds, "
        f"{mb} MB floods, {args.keys} keystrokes per round"
    )
    pages = {"desk": desk, "bare": bare}
    if ttyd_server is not None:
        grid = f"{ttyd_info['cols']}x{ttyd_info['rows']}"
        print(f"ttyd's page: renderer {ttyd_info['renderer']}, grid {grid}")
        pages["ttyd"] = ttyd
    print("Desk's page against the bare xterm.js page on the one-hop server (and ttyd's page):")
    side_by_side(pages, mb)
    print("Desk alone:")
    print(
        f"baseline (WebSocket client, no rendering): {mb / baseline:8.1f} MB/s  ({baseline:.2f} s)"
    )
    visible_seconds = statistics.median(desk.floods)
    print(
        f"xterm.js, visible tab (median):            {mb / visible_seconds:8.1f} MB/s  "
        f"({visible_seconds:.2f} s)  ratio vs baseline {baseline / visible_seconds:.2f}"
    )
    print(
        f"xterm.js, background tab (typing meanwhile): {mb / background:6.1f} MB/s  "
        f"({background:.2f} s)  ratio vs baseline {baseline / background:.2f}"
    )
    for name, samples in (("idle, fresh tab", idle), ("during a background flood", busy)):
        print(
            f"keystroke-to-paint {name}: p50 {statistics.median(samples):.1f} ms, "
            f"p99 {percentile(samples, 0.99):.1f} ms, max {max(samples):.1f} ms "
            f"(n={len(samples)})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
