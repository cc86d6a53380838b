"""Terminal benchmarks: the real service + PTY host over a real WebSocket, beside raw PTY reads.

Run: .venv/bin/python bench/terminals.py [--runs N] [--quick] [--only SECTION ...]

Prints medians as a table; never asserts on time. Every figure is measured in this run next
to a baseline measured the same way in the same run (a Python process reading a PTY
directly, or writing a byte to it and reading the echo).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from ttyd_peer import Ttyd, flood_readers_process  # noqa: E402

from desktop.native import spawn  # noqa: E402

MB = 1_000_000
ECHO_TIMEOUT = 5.0
MiB = 1024 * 1024


def bulk_command(size: int) -> str:
    return f"head -c {size} /dev/zero | tr '\\0' a"


def lines_command(size: int) -> str:
    return f"yes {'a' * 79} | head -c {size}"


def seq_command(count: int) -> str:
    return f"seq 1 {count}"


# ----- baselines: a Python process reading a PTY directly ---------------------------------


def raw_pty_read(command: str) -> tuple[int, float]:
    """Bytes and seconds for reading everything `command` prints, straight from the PTY."""
    process = spawn(["sh", "-c", command], env=dict(os.environ), cwd="/", cols=80, rows=24)
    buffer = bytearray(256 * 1024)
    total = 0
    started = time.perf_counter()
    poller = select.poll()
    poller.register(process.fd, select.POLLIN)
    while True:
        try:
            count = process.read_into(buffer)
        except EOFError:
            break
        if count:
            total += count
        else:
            poller.poll(1000)
    elapsed = time.perf_counter() - started
    process.close()
    while process.poll_exit() is None:
        time.sleep(0.01)
    return total, elapsed


def raw_echo_latencies(samples: int, pause: float = 0.0) -> list[float]:
    process = spawn(["cat"], env=dict(os.environ), cwd="/", cols=80, rows=24)
    poller = select.poll()
    poller.register(process.fd, select.POLLIN)
    latencies = []
    buffer = bytearray(4096)
    for _ in range(samples):
        started = time.perf_counter()
        process.write(b"x")
        while True:
            poller.poll(1000)
            if process.read_into(buffer) and b"x" in buffer:
                break
        latencies.append(time.perf_counter() - started)
        buffer[:] = bytes(len(buffer))
        if pause:
            time.sleep(pause)
    process.signal_group(signal.SIGKILL)
    process.close()
    return latencies


# ----- the service --------------------------------------------------------------------


# The page acks output in batches (web/src/terminals/link.js): at 64 KiB, or 8 ms after the
# first byte it has not acked. The bench's clients do the same, so the PTY host parses the
# acks a real tab sends, not one per frame.
ACK_BATCH_BYTES = 64 * 1024
ACK_DELAY = 0.008


class PageAcks:
    """A client's acks, batched like the page's."""

    def __init__(self, socket: aiohttp.ClientWebSocketResponse) -> None:
        self.socket = socket
        self.unacked = 0
        self.due = 0.0

    async def received(self, count: int) -> None:
        if not self.unacked:
            self.due = time.monotonic() + ACK_DELAY
        self.unacked += count
        if self.unacked >= ACK_BATCH_BYTES:
            await self.flush()

    async def flush(self) -> None:
        if self.unacked:
            count, self.unacked = self.unacked, 0
            await self.socket.send_str(json.dumps({"type": "ack", "bytes": count}))

    async def receive(self) -> aiohttp.WSMessage:
        """The next message; the batch leaves when its delay is up while waiting for it."""
        while self.unacked:
            remaining = self.due - time.monotonic()
            if remaining <= 0:
                await self.flush()
                break
            try:
                return await self.socket.receive(timeout=remaining)
            except TimeoutError:
                await self.flush()
        return await self.socket.receive()

    async def sleep(self, seconds: float) -> None:
        """Sleep, sending the batch when it is due (the page's timer does that)."""
        end = time.monotonic() + seconds
        if self.unacked and self.due < end:
            await asyncio.sleep(max(0.0, self.due - time.monotonic()))
            await self.flush()
        await asyncio.sleep(max(0.0, end - time.monotonic()))


class Service:
    # Which checkout's `desktop` runs (--desk-root: measure another commit in the same run).
    root = ROOT

    def __init__(self, base: Path) -> None:
        self.data = base / "data"
        self.runtime = base / "run"
        self.env = {
            **os.environ,
            "DESK_DATA_DIR": str(self.data),
            "DESK_RUNTIME_DIR": str(self.runtime),
            "PYTHONPATH": str(self.root),
        }
        self.process: subprocess.Popen[str] | None = None
        self.url = ""
        self.token = ""

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "desktop", "serve", "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=self.env,
            cwd=str(self.root),
        )
        assert self.process.stdout is not None
        ready = json.loads(self.process.stdout.readline())
        self.url, self.token = ready["url"], ready["token"]

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def host_pid(self) -> int:
        raw = json.loads((self.runtime / "pty-host.json").read_text())
        return int(raw["pid"])

    async def stop(self) -> None:
        from desktop.config import load_settings
        from desktop.ptyhost.launcher import stop_host

        if self.process is not None:
            self.process.send_signal(signal.SIGTERM)
            await asyncio.to_thread(self.process.wait, 10)
        await stop_host(load_settings(self.data, self.runtime), save=False)


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class Bench:
    def __init__(self, service: Service, session: aiohttp.ClientSession) -> None:
        self.service = service
        self.session = session

    async def create(self, command: str, **extra: Any) -> dict[str, Any]:
        async with self.session.post(
            f"{self.service.url}/api/pty",
            json={"command": "sh", "args": ["-c", command], **extra},
        ) as response:
            assert response.status == 201, await response.text()
            return dict((await response.json())["data"])

    async def get(self, terminal_id: str) -> dict[str, Any]:
        async with self.session.get(f"{self.service.url}/api/pty/{terminal_id}") as response:
            return dict((await response.json())["data"])

    async def delete(self, terminal_id: str) -> None:
        async with self.session.delete(f"{self.service.url}/api/pty/{terminal_id}"):
            pass

    async def connect(self, terminal_id: str, **query: str) -> aiohttp.ClientWebSocketResponse:
        url = f"{self.service.url}/api/pty/{terminal_id}/connect".replace("http", "ws", 1)
        return await self.session.ws_connect(url, params=query, max_msg_size=0)

    async def read_acking(self, socket: aiohttp.ClientWebSocketResponse, until: str) -> int:
        """Output bytes received (acked as the page acks) until a text frame of type `until`."""
        received = 0
        acks = PageAcks(socket)
        while True:
            message = await acks.receive()
            if message.type == aiohttp.WSMsgType.BINARY:
                received += len(message.data)
                await acks.received(len(message.data))
            elif message.type == aiohttp.WSMsgType.TEXT:
                if json.loads(message.data)["type"] == until:
                    await acks.flush()
                    return received
            else:
                raise RuntimeError(f"socket ended: {message}")

    async def read_until_replayed(self, socket: aiohttp.ClientWebSocketResponse) -> int:
        """Consume frames through replay_complete; returns replay bytes (acked)."""
        return await self.read_acking(socket, "replay_complete")

    async def throughput(self, command: str) -> tuple[int, float]:
        """Bytes and seconds from `go` to `exited` for one WebSocket client (acking)."""
        info = await self.create("read go; " + command)
        socket = await self.connect(info["id"], cursor=str(info["output"]["tail"]))
        await self.read_until_replayed(socket)
        started = time.perf_counter()
        await socket.send_bytes(b"\r")
        total = await self.read_acking(socket, "exited")
        elapsed = time.perf_counter() - started
        await socket.close()
        await self.delete(info["id"])
        return total, elapsed

    async def echo_latencies(self, samples: int, pause: float = 0.0) -> list[float]:
        info = await self.create("exec cat")
        socket = await self.connect(info["id"])
        await self.read_until_replayed(socket)
        latencies = []
        acks = PageAcks(socket)
        for _ in range(samples):
            started = time.perf_counter()
            await socket.send_bytes(b"x")
            while True:
                try:
                    message = await asyncio.wait_for(acks.receive(), ECHO_TIMEOUT)
                except TimeoutError:
                    progress("an echo never came (sample dropped)")
                    break
                if message.type == aiohttp.WSMsgType.BINARY:
                    echoed = b"x" in message.data
                    if echoed:
                        # The echo is here: stop the clock before acking it.
                        latencies.append(time.perf_counter() - started)
                    await acks.received(len(message.data))
                    if echoed:
                        break
                elif message.type not in (aiohttp.WSMsgType.TEXT,):
                    raise RuntimeError(f"socket ended: {message}")
            if pause:
                await acks.sleep(pause)
        await socket.close()
        await self.delete(info["id"])
        return latencies

    async def wait_tail(self, terminal_id: str, at_least: int) -> dict[str, Any]:
        while True:
            info = await self.get(terminal_id)
            if info["output"]["tail"] >= at_least:
                return info
            await asyncio.sleep(0.05)


def flood_readers(url: str, token: str, ids: list[str]) -> subprocess.Popen[bytes]:
    """A separate process that reads and acks the flooding terminals (other open tabs)."""
    code = f"""
import asyncio, json, aiohttp
async def tab(session, terminal_id):
    url = {url!r}.replace('http', 'ws', 1) + '/api/pty/' + terminal_id + '/connect'
    async with session.ws_connect(url, params={{'role': 'observer'}}, max_msg_size=0) as ws:
        unacked = 0
        async for message in ws:
            if message.type == aiohttp.WSMsgType.BINARY:
                unacked += len(message.data)
                if unacked >= {ACK_BATCH_BYTES}:  # a flood never waits for the page's timer
                    await ws.send_str(json.dumps({{'type': 'ack', 'bytes': unacked}}))
                    unacked = 0
async def main():
    async with aiohttp.ClientSession(headers={{'Authorization': 'Bearer {token}'}}) as session:
        await asyncio.gather(*(tab(session, i) for i in {ids!r}))
asyncio.run(main())
"""
    return subprocess.Popen([sys.executable, "-c", code], cwd=str(ROOT))


def progress(message: str) -> None:
    print(f"... {message}", file=sys.stderr, flush=True)


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def percentile_ms(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))
    return ordered[index] * 1000


Row = tuple[str, str, str, str]
SECTIONS = ("hops", "throughput", "echo", "reattach", "memory")


def wanted(args: argparse.Namespace, section: str) -> bool:
    return not args.only or section in args.only


async def run(args: argparse.Namespace) -> tuple[list[Row], list[HopRow]]:
    rows: list[Row] = []
    hop_rows: list[HopRow] = []
    with tempfile.TemporaryDirectory(prefix="desk-bench-", dir="/tmp") as base:
        service = Service(Path(base))
        service.start()
        try:
            async with aiohttp.ClientSession(headers=service.headers) as session:
                bench = Bench(service, session)
                await bench.create("true")  # start the PTY host
                if wanted(args, "hops"):
                    hop_rows = await hops(bench, args)
                if wanted(args, "throughput"):
                    rows.extend(await throughputs(bench, args))
                if wanted(args, "echo"):
                    rows.extend(await echoes(bench, args))
                if wanted(args, "reattach"):
                    rows.extend(await reattach_and_checkpoint(bench, args))
        finally:
            await service.stop()
    if not wanted(args, "memory"):
        return rows, hop_rows
    # Memory in a fresh service and host, so earlier floods do not blur the figures.
    with tempfile.TemporaryDirectory(prefix="desk-bench-", dir="/tmp") as base:
        service = Service(Path(base))
        service.start()
        try:
            async with aiohttp.ClientSession(headers=service.headers) as session:
                bench = Bench(service, session)
                await bench.create("true")
                rows.extend(await memory(bench, service, args))
        finally:
            await service.stop()
    return rows, hop_rows


async def throughputs(bench: Bench, args: argparse.Namespace) -> list[Row]:
    rows: list[Row] = []
    bulk_size = 20 * MB if args.quick else 100 * MB
    seq_count = 2_000_000 if args.quick else 10_000_000
    for name, command in (
        (f"bulk {bulk_size // MB} MB of 'a'", bulk_command(bulk_size)),
        (f"seq 1 {seq_count}", seq_command(seq_count)),
        (
            f"bulk {bulk_size // MB} MB of 80-column lines of 'a'",
            lines_command(bulk_size),
        ),
    ):
        ours, raw = [], []
        progress(f"throughput: {name}")
        for _ in range(args.runs):
            size, seconds = await bench.throughput(command)
            ours.append(size / seconds / MB)
            raw_size, raw_seconds = await asyncio.to_thread(raw_pty_read, command)
            raw.append(raw_size / raw_seconds / MB)
        rows.append(
            (
                f"throughput, {name}",
                f"{statistics.median(ours):.1f} MB/s",
                f"{statistics.median(raw):.1f} MB/s",
                f"{statistics.median(ours) / statistics.median(raw):.2f}x",
            )
        )
    return rows


async def echoes(bench: Bench, args: argparse.Namespace) -> list[Row]:
    rows: list[Row] = []
    samples = 100 if args.quick else 300
    service = bench.service
    progress("echo latency")
    raw_echo = await asyncio.to_thread(raw_echo_latencies, samples)
    idle = await bench.echo_latencies(samples)
    for label, values in (("p50", 0.5), ("p99", 0.99)):
        rows.append(
            (
                f"echo {label}, idle",
                f"{percentile_ms(idle, values):.2f} ms",
                f"{percentile_ms(raw_echo, values):.2f} ms",
                f"{percentile_ms(idle, values) / percentile_ms(raw_echo, values):.1f}x",
            )
        )
    floods = [await bench.create("exec yes 'flood flood flood'") for _ in range(4)]
    for with_tabs in (False, True):
        readers = None
        if with_tabs:
            ids = [f["id"] for f in floods]
            readers = flood_readers(service.url, service.token, ids)
        await asyncio.sleep(1.0)  # let the floods (and their tabs) get going
        before = [(await bench.get(f["id"]))["output"]["tail"] for f in floods]
        busy = await bench.echo_latencies(samples)
        after = [(await bench.get(f["id"]))["output"]["tail"] for f in floods]
        raw_busy = await asyncio.to_thread(raw_echo_latencies, samples)
        if readers is not None:
            readers.kill()
            readers.wait()
        where = "read by 4 tabs" if with_tabs else "no tab attached"
        for label, values in (("p50", 0.5), ("p99", 0.99)):
            ours_ms = percentile_ms(busy, values)
            raw_ms = percentile_ms(raw_busy, values)
            rows.append(
                (
                    f"echo {label}, beside 4 floods ({where})",
                    f"{ours_ms:.2f} ms",
                    f"{raw_ms:.2f} ms",
                    f"{ours_ms / raw_ms:.1f}x",
                )
            )
        flooded = (sum(after) - sum(before)) / MB
        rows.append(("  (flood output meanwhile)", f"{flooded:.0f} MB", "", ""))
    for flood in floods:
        await bench.delete(flood["id"])
    return rows


async def reattach_and_checkpoint(bench: Bench, args: argparse.Namespace) -> list[Row]:
    rows: list[Row] = []
    progress("reattach")
    info = await bench.create("read go; head -c 3000000 /dev/zero | tr '\\0' b; exec cat")
    socket = await bench.connect(info["id"])
    await bench.read_until_replayed(socket)
    await socket.send_bytes(b"\r")
    await socket.close()  # no controller left: nothing holds the output back
    info = await bench.wait_tail(info["id"], 3_000_000)
    tail = info["output"]["tail"]
    times, sizes = [], []
    for _ in range(max(5, args.runs * 3)):
        started = time.perf_counter()
        socket = await bench.connect(info["id"], cursor=str(tail - 2 * MiB), role="observer")
        sizes.append(await bench.read_until_replayed(socket))
        times.append(time.perf_counter() - started)
        await socket.close()
    _, raw_seconds = await asyncio.to_thread(raw_pty_read, "head -c 2097152 /dev/zero | tr '\\0' b")
    rows.append(
        (
            f"reattach, {statistics.median(sizes) / MiB:.0f} MiB replay to replay_complete",
            f"{median_ms(times):.1f} ms",
            f"{raw_seconds * 1000:.1f} ms",
            f"{median_ms(times) / (raw_seconds * 1000):.1f}x",
        )
    )
    await bench.delete(info["id"])

    progress("checkpoint")
    flood_size = 10 * MB if args.quick else 50 * MB
    flood = await bench.create(
        f"read go; seq 1 {flood_size // 8} | head -c {flood_size}; "
        "printf '\\033[1;32mdone\\033[0m\\n'; exec cat"
    )
    socket = await bench.connect(flood["id"])
    await bench.read_until_replayed(socket)
    await socket.send_bytes(b"\r")
    reading = asyncio.ensure_future(drain(socket))
    await bench.wait_tail(flood["id"], flood_size)
    snapshot_times = []
    for _ in range(max(3, args.runs)):
        started = time.perf_counter()
        async with bench.session.get(
            f"{bench.service.url}/api/pty/{flood['id']}/snapshot"
        ) as response:
            await response.read()
        snapshot_times.append(time.perf_counter() - started)
    reading.cancel()
    await socket.close()
    _, raw_seconds = await asyncio.to_thread(
        raw_pty_read, f"seq 1 {flood_size // 8} | head -c {flood_size}"
    )
    rows.append(
        (
            f"checkpoint (snapshot) after {flood_size // MB} MB flood: first",
            f"{snapshot_times[0] * 1000:.1f} ms",
            f"{raw_seconds * 1000:.0f} ms (raw read of the flood)",
            "",
        )
    )
    rows.append(
        (
            "checkpoint (snapshot), later calls (median)",
            f"{median_ms(snapshot_times[1:]):.1f} ms",
            "",
            "",
        )
    )
    await bench.delete(flood["id"])
    return rows


async def drain(socket: aiohttp.ClientWebSocketResponse) -> None:
    acks = PageAcks(socket)
    while True:
        message = await acks.receive()
        if message.type == aiohttp.WSMsgType.BINARY:
            await acks.received(len(message.data))
        elif message.type != aiohttp.WSMsgType.TEXT:
            return


async def memory(bench: Bench, service: Service, args: argparse.Namespace) -> list[Row]:
    rows: list[Row] = []
    progress("memory")
    host_pid = service.host_pid()
    assert service.process is not None
    service_pid = service.process.pid
    idle_command = "exec sleep 100000"
    first = [await bench.create(idle_command)]
    await asyncio.sleep(0.5)
    host_one, service_one = rss_kb(host_pid), rss_kb(service_pid)
    more = [await bench.create(idle_command) for _ in range(99)]
    # Idle shells print a prompt; give the host a moment to read and settle.
    await asyncio.sleep(1.0)
    host_hundred, service_hundred = rss_kb(host_pid), rss_kb(service_pid)
    rows.append(
        (
            "RSS host / service, 1 idle terminal",
            f"{host_one / 1024:.1f} / {service_one / 1024:.1f} MB",
            "",
            "",
        )
    )
    rows.append(
        (
            "RSS host / service, 100 idle terminals",
            f"{host_hundred / 1024:.1f} / {service_hundred / 1024:.1f} MB",
            "",
            "",
        )
    )
    rows.append(
        (
            "  per extra idle terminal (host)",
            f"{(host_hundred - host_one) / 99:.0f} KB",
            "",
            "",
        )
    )
    shells = [await bench.create("exec bash --norc --noprofile -i") for _ in range(20)]
    await asyncio.sleep(1.0)
    host_shells = rss_kb(host_pid)
    rows.append(
        (
            "  per extra idle bash terminal (host, prompt printed)",
            f"{(host_shells - host_hundred) / 20:.0f} KB",
            "",
            "",
        )
    )
    for info in first + more + shells:
        await bench.delete(info["id"])
    await asyncio.sleep(2.5)

    flood_size = 20 * MB if args.quick else 100 * MB
    for role in ("observer", "controller"):
        info = await bench.create("read go; " + lines_command(flood_size) + "; exec cat")
        reader = None
        if role == "observer":
            reader = await bench.connect(info["id"])
            await bench.read_until_replayed(reader)
        stalled = await bench.connect(info["id"], role=role, takeover="true")
        before = (rss_kb(host_pid), rss_kb(service_pid))
        peak = list(before)
        if reader is not None:
            await reader.send_bytes(b"\r")
            draining = asyncio.ensure_future(drain(reader))
        else:
            await stalled.send_bytes(b"\r")
            draining = None
        deadline = time.monotonic() + (60 if role == "observer" else 5)
        while time.monotonic() < deadline:
            peak = [max(peak[0], rss_kb(host_pid)), max(peak[1], rss_kb(service_pid))]
            tail = (await bench.get(info["id"]))["output"]["tail"]
            if tail >= flood_size:
                break
            await asyncio.sleep(0.1)
        tail = (await bench.get(info["id"]))["output"]["tail"]
        rows.append(
            (
                f"RSS host / service, stalled {role} beside a {flood_size // MB} MB flood of lines",
                f"+{(peak[0] - before[0]) / 1024:.1f} / +{(peak[1] - before[1]) / 1024:.1f} MB",
                "",
                f"flood got to {tail / MB:.1f} MB",
            )
        )
        if draining is not None:
            draining.cancel()
        await stalled.close()
        if reader is not None:
            await reader.close()
        await bench.delete(info["id"])
    return rows


# ----- the one-hop baseline (bench/onehop.py: one process reads the PTY and writes frames) --


class OneHop:
    """bench/onehop.py in a subprocess: the shape of ttyd and terminado."""

    def __init__(self, loop: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "bench" / "onehop.py"), "--loop", loop],
            stdout=subprocess.PIPE,
            text=True,
            cwd=str(ROOT),
        )
        assert self.process.stdout is not None
        self.url = str(json.loads(self.process.stdout.readline())["url"])

    def ws_url(self, command: str) -> str:
        from urllib.parse import quote

        return self.url.replace("http", "ws", 1) + "/ws?command=" + quote(command)

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(10)


async def onehop_throughput(
    session: aiohttp.ClientSession, onehop: OneHop, command: str
) -> tuple[int, float]:
    async with session.ws_connect(onehop.ws_url("read go; " + command), max_msg_size=0) as ws:
        await ws.send_bytes(b"\r")
        started = time.perf_counter()
        total = 0
        async for message in ws:
            if message.type == aiohttp.WSMsgType.BINARY:
                total += len(message.data)
        return total, time.perf_counter() - started


async def onehop_echo(
    session: aiohttp.ClientSession, onehop: OneHop, samples: int, pause: float
) -> list[float]:
    async with session.ws_connect(onehop.ws_url("exec cat"), max_msg_size=0) as ws:
        latencies = []
        for _ in range(samples):
            started = time.perf_counter()
            await ws.send_bytes(b"x")
            while True:
                try:
                    message = await asyncio.wait_for(ws.receive(), ECHO_TIMEOUT)
                except TimeoutError:
                    progress("an echo never came (sample dropped)")
                    break
                if message.type != aiohttp.WSMsgType.BINARY:
                    raise RuntimeError(f"socket ended: {message}")
                if b"x" in message.data:
                    latencies.append(time.perf_counter() - started)
                    break
            if pause:
                await asyncio.sleep(pause)
        return latencies


def onehop_flood_readers(onehop: OneHop, count: int) -> subprocess.Popen[bytes]:
    """A separate process with `count` tabs of the baseline, each reading a `yes` flood."""
    return flood_readers_process(onehop.ws_url("exec yes 'flood flood flood'"), count, ROOT)


async def read_until(ws: aiohttp.ClientWebSocketResponse, text: bytes) -> None:
    """Read a peer's socket until its output has shown `text`."""
    seen = b""
    while text not in seen:
        message = await ws.receive()
        if message.type != aiohttp.WSMsgType.BINARY:
            raise RuntimeError(f"socket ended: {message}")
        seen += message.data


HopRow = tuple[str, str, str, str, str, str]
ROUNDS = 5
PAUSE = 0.010


def rate(size: int, seconds: float) -> float:
    return size / seconds / MB


def p50s(rounds: list[list[float]]) -> str:
    return " ".join(f"{median_ms(values):.2f}" for values in rounds)


async def hops(bench: Bench, args: argparse.Namespace) -> list[HopRow]:
    """Desk against the one-hop baseline, ttyd (when given) and the raw PTY read, interleaved
    in one run."""
    rows: list[HopRow] = []
    onehop = OneHop(args.baseline_loop)
    ttyd = Ttyd(args.ttyd) if args.ttyd is not None else None
    try:
        async with aiohttp.ClientSession() as plain:
            # First, before any flood has grown a buffer: the idle footprint.
            rows.append(await hop_idle_rss(bench, plain, onehop, ttyd))
            rows.extend(await hop_throughputs(bench, plain, onehop, ttyd, args))
            rows.extend(await hop_echoes(bench, plain, onehop, ttyd, args))
    finally:
        onehop.stop()
        if ttyd is not None:
            ttyd.stop()
    return rows


def versus(desk: float, one: float, ttyd: float | None) -> str:
    """The ratio column: Desk against the one-hop baseline and, when measured, ttyd."""
    text = f"{desk / one:.2f}x one-hop"
    return text + (f", {desk / ttyd:.2f}x ttyd" if ttyd else "")


def shown(value: float | None, digits: int = 1) -> str:
    return "" if value is None else f"{value:.{digits}f}"


async def hop_idle_rss(
    bench: Bench, plain: aiohttp.ClientSession, onehop: OneHop, ttyd: Ttyd | None
) -> HopRow:
    """RSS of service + PTY host against the one-hop server (and ttyd), each with one idle
    terminal that a connected client has seen print (the shell's own process is not counted)."""
    progress("hops, idle RSS with one terminal")
    command = "echo ready; exec sleep 100000"
    info = await bench.create(command)
    socket = await bench.connect(info["id"])
    await bench.read_until_replayed(socket)
    await bench.wait_tail(info["id"], len("ready\r\n"))
    assert bench.service.process is not None
    service_kb = rss_kb(bench.service.process.pid)
    host_kb = rss_kb(bench.service.host_pid())
    async with plain.ws_connect(onehop.ws_url(command), max_msg_size=0) as ws:
        await read_until(ws, b"ready")
        onehop_kb = rss_kb(onehop.process.pid)
    ttyd_kb = None
    if ttyd is not None:
        ws = await ttyd.connect(plain, command)
        await read_until(ws, b"ready")
        ttyd_kb = rss_kb(ttyd.process.pid)
        await ws.close()
    await socket.close()
    await bench.delete(info["id"])
    desk_kb = service_kb + host_kb
    return (
        "idle RSS, one terminal, MB (desk: service + host)",
        f"{desk_kb / 1024:.1f} ({service_kb / 1024:.1f} + {host_kb / 1024:.1f})",
        f"{onehop_kb / 1024:.1f}",
        shown(None if ttyd_kb is None else ttyd_kb / 1024),
        "",
        versus(desk_kb, onehop_kb, ttyd_kb),
    )


async def hop_throughputs(
    bench: Bench,
    plain: aiohttp.ClientSession,
    onehop: OneHop,
    ttyd: Ttyd | None,
    args: argparse.Namespace,
) -> list[HopRow]:
    rows: list[HopRow] = []
    bulk_size = 20 * MB if args.quick else 100 * MB
    seq_count = 2_000_000 if args.quick else 10_000_000
    for name, command in (
        (f"{bulk_size // MB} MB of 'a'", bulk_command(bulk_size)),
        (f"{bulk_size // MB} MB of 80-column lines", lines_command(bulk_size)),
        (f"seq 1 {seq_count}", seq_command(seq_count)),
    ):
        progress(f"hops, throughput: {name}")
        ours, base, peer, raw = [], [], [], []
        for _ in range(args.runs):
            ours.append(rate(*await bench.throughput(command)))
            base.append(rate(*await onehop_throughput(plain, onehop, command)))
            if ttyd is not None:
                peer.append(rate(*await ttyd.throughput(plain, command)))
            raw.append(rate(*await asyncio.to_thread(raw_pty_read, command)))
        desk, one, pty = (statistics.median(v) for v in (ours, base, raw))
        tty = statistics.median(peer) if peer else None
        rows.append(
            (
                f"throughput, {name}, MB/s",
                f"{desk:.1f}",
                f"{one:.1f}",
                shown(tty),
                f"{pty:.1f}",
                f"{versus(desk, one, tty)}, {desk / pty:.2f}x raw",
            )
        )
    return rows


async def hop_echoes(
    bench: Bench,
    plain: aiohttp.ClientSession,
    onehop: OneHop,
    ttyd: Ttyd | None,
    args: argparse.Namespace,
) -> list[HopRow]:
    rows: list[HopRow] = []
    samples = 100 if args.quick else 200
    for label, pause in (("10 ms pause between samples", PAUSE), ("back to back", 0.0)):
        progress(f"hops, echo idle, {label}")
        ours: list[list[float]] = []
        base: list[list[float]] = []
        peer: list[list[float]] = []
        raw: list[list[float]] = []
        for _ in range(ROUNDS):
            ours.append(await bench.echo_latencies(samples, pause))
            base.append(await onehop_echo(plain, onehop, samples, pause))
            if ttyd is not None:
                peer.append(await ttyd.echo(plain, samples, pause, ECHO_TIMEOUT))
            raw.append(await asyncio.to_thread(raw_echo_latencies, samples, pause))
        rows.extend(echo_rows(f"echo idle, {label}", ours, base, peer, raw))
    progress("hops, echo beside 4 floods read by 4 tabs")
    floods = [await bench.create("exec yes 'flood flood flood'") for _ in range(4)]
    service = bench.service
    desk_readers = flood_readers(service.url, service.token, [f["id"] for f in floods])
    ours, base, peer = [], [], []
    try:
        await asyncio.sleep(1.0)
        # Interleaved by round: each peer's floods run only while it is measured.
        for _ in range(ROUNDS):
            desk_readers.send_signal(signal.SIGCONT)
            await asyncio.sleep(0.3)
            ours.append(await bench.echo_latencies(samples, PAUSE))
            desk_readers.send_signal(signal.SIGSTOP)
            base_readers = onehop_flood_readers(onehop, 4)
            await asyncio.sleep(1.0)
            base.append(await onehop_echo(plain, onehop, samples, PAUSE))
            base_readers.kill()
            base_readers.wait()
            if ttyd is not None:
                ttyd_readers = ttyd.flood_readers(4, ROOT)
                await asyncio.sleep(1.0)
                peer.append(await ttyd.echo(plain, samples, PAUSE, ECHO_TIMEOUT))
                ttyd_readers.kill()
                ttyd_readers.wait()
    finally:
        desk_readers.kill()
        desk_readers.wait()
        for flood in floods:
            await bench.delete(flood["id"])
    rows.extend(echo_rows("echo beside 4 floods (10 ms pause)", ours, base, peer, None))
    return rows


def echo_rows(
    name: str,
    ours: list[list[float]],
    base: list[list[float]],
    peer: list[list[float]],
    raw: list[list[float]] | None,
) -> list[HopRow]:
    """p50 and p99 over every round's samples, then each round's p50 (drift shows there);
    `peer` is ttyd's rounds, empty when it was not measured."""
    rows: list[HopRow] = []
    pooled = [[x for values in group for x in values] for group in (ours, base, peer, raw or [])]
    for label, fraction in (("p50", 0.5), ("p99", 0.99)):
        desk, one = (percentile_ms(v, fraction) for v in pooled[:2])
        tty = percentile_ms(pooled[2], fraction) if peer else None
        pty = f"{percentile_ms(pooled[3], fraction):.2f}" if raw else ""
        rows.append(
            (
                f"{name}, {label} ms",
                f"{desk:.2f}",
                f"{one:.2f}",
                shown(tty, 2),
                pty,
                versus(desk, one, tty),
            )
        )
    rows.append(
        (
            "  per-round p50s",
            p50s(ours),
            p50s(base),
            p50s(peer) if peer else "",
            p50s(raw) if raw else "",
            "",
        )
    )
    return rows


def print_hops(rows: list[HopRow], loop: str) -> None:
    header = ("figure", "desk", f"one-hop ({loop})", "ttyd", "raw PTY", "desk / peer")
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(6)]
    line = "  ".join("-" * width for width in widths)
    print(line)
    print("  ".join(str(header[i]).ljust(widths[i]) for i in range(6)))
    print(line)
    for row in rows:
        print("  ".join(str(row[i]).ljust(widths[i]) for i in range(6)))
    print(line)


def print_table(rows: list[Row]) -> None:
    header = ("measure", "desk (service + host + WS)", "raw PTY baseline", "ratio / note")
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(4)]
    line = "  ".join("-" * width for width in widths)
    print(line)
    print("  ".join(str(header[i]).ljust(widths[i]) for i in range(4)))
    print(line)
    for row in rows:
        print("  ".join(str(row[i]).ljust(widths[i]) for i in range(4)))
    print(line)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="repetitions for medians")
    parser.add_argument("--quick", action="store_true", help="smaller outputs, fewer samples")
    parser.add_argument(
        "--only",
        choices=SECTIONS,
        action="append",
        help="run only these sections (repeatable); all by default",
    )
    parser.add_argument(
        "--desk-root",
        type=Path,
        default=ROOT,
        help="run the service and PTY host of this checkout (e.g. an export of main)",
    )
    parser.add_argument(
        "--baseline-loop",
        choices=("uvloop", "asyncio"),
        default="uvloop",
        help="event loop of the one-hop baseline server",
    )
    parser.add_argument(
        "--ttyd",
        type=Path,
        default=shutil.which("ttyd"),
        help="a ttyd binary to measure beside in the hops section (default: ttyd on PATH;"
        " bench/ttyd_peer.py says how to build one)",
    )
    args = parser.parse_args(argv)
    Service.root = args.desk_root.resolve()
    print(f"desk from {Service.root}", flush=True)
    rows, hop_rows = asyncio.run(run(args))
    if hop_rows:
        print_hops(hop_rows, args.baseline_loop)
    if rows:
        print_table(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
