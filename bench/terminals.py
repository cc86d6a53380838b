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

from desktop.native import spawn  # noqa: E402

MB = 1_000_000
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


def raw_echo_latencies(samples: int) -> list[float]:
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
    process.signal_group(signal.SIGKILL)
    process.close()
    return latencies


# ----- the service --------------------------------------------------------------------


class Service:
    def __init__(self, base: Path) -> None:
        self.data = base / "data"
        self.runtime = base / "run"
        self.env = {
            **os.environ,
            "DESK_DATA_DIR": str(self.data),
            "DESK_RUNTIME_DIR": str(self.runtime),
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
            cwd=str(ROOT),
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
        """Output bytes received (each message acked) until a text frame of type `until`."""
        received = 0
        while True:
            message = await socket.receive()
            if message.type == aiohttp.WSMsgType.BINARY:
                received += len(message.data)
                await socket.send_str(json.dumps({"type": "ack", "bytes": len(message.data)}))
            elif message.type == aiohttp.WSMsgType.TEXT:
                if json.loads(message.data)["type"] == until:
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

    async def echo_latencies(self, samples: int) -> list[float]:
        info = await self.create("exec cat")
        socket = await self.connect(info["id"])
        await self.read_until_replayed(socket)
        latencies = []
        for _ in range(samples):
            started = time.perf_counter()
            await socket.send_bytes(b"x")
            while True:
                message = await socket.receive()
                if message.type == aiohttp.WSMsgType.BINARY:
                    await socket.send_str(json.dumps({"type": "ack", "bytes": len(message.data)}))
                    if b"x" in message.data:
                        break
                elif message.type not in (aiohttp.WSMsgType.TEXT,):
                    raise RuntimeError(f"socket ended: {message}")
            latencies.append(time.perf_counter() - started)
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
        async for message in ws:
            if message.type == aiohttp.WSMsgType.BINARY:
                await ws.send_str(json.dumps({{'type': 'ack', 'bytes': len(message.data)}}))
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
SECTIONS = ("throughput", "echo", "reattach", "memory")


def wanted(args: argparse.Namespace, section: str) -> bool:
    return not args.only or section in args.only


async def run(args: argparse.Namespace) -> list[Row]:
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="desk-bench-", dir="/tmp") as base:
        service = Service(Path(base))
        service.start()
        try:
            async with aiohttp.ClientSession(headers=service.headers) as session:
                bench = Bench(service, session)
                await bench.create("true")  # start the PTY host
                if wanted(args, "throughput"):
                    rows.extend(await throughputs(bench, args))
                if wanted(args, "echo"):
                    rows.extend(await echoes(bench, args))
                if wanted(args, "reattach"):
                    rows.extend(await reattach_and_checkpoint(bench, args))
        finally:
            await service.stop()
    if not wanted(args, "memory"):
        return rows
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
    return rows


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
    async for message in socket:
        if message.type == aiohttp.WSMsgType.BINARY:
            await socket.send_str(json.dumps({"type": "ack", "bytes": len(message.data)}))


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
    args = parser.parse_args(argv)
    rows = asyncio.run(run(args))
    print_table(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
