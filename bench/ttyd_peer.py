"""ttyd as a peer in bench/terminals.py's hops section: the C terminal server the issue measured.

ttyd has no package in Debian 12; build it from source (`cmake` against Debian's
libwebsockets-dev, libjson-c-dev and libuv1-dev) and pass the binary with `--ttyd PATH`.
One ttyd server runs for the whole section with `-a` (the command comes from the URL's `arg`)
and `-W` (clients may type). Its WebSocket protocol (subprotocol `tty`): the client's first
message is JSON with the window size, which spawns the command; then every message in either
direction is one type byte and its payload (`0` = terminal bytes).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.parse import quote

import aiohttp

OUTPUT = b"0"[0]
INPUT = b"0"
HELLO = json.dumps({"AuthToken": "", "columns": 80, "rows": 24})


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Ttyd:
    """A ttyd server bound to the loopback interface, running `command` (with the URL's `arg`
    appended: `sh -c <arg>` by default) per connection."""

    def __init__(
        self,
        binary: Path,
        command: Sequence[str] = ("sh", "-c"),
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.port = _free_port()
        self.process = subprocess.Popen(
            [str(binary), "-p", str(self.port), "-i", "lo", "-W", "-a", "-d", "0", *command],
            env={**os.environ, **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 10.0
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1.0).close()
                break
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise RuntimeError(f"ttyd did not listen on {self.port}") from None
                time.sleep(0.02)

    def ws_url(self, command: str) -> str:
        return f"ws://127.0.0.1:{self.port}/ws?arg={quote(command)}"

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)

    async def connect(
        self, session: aiohttp.ClientSession, command: str
    ) -> aiohttp.ClientWebSocketResponse:
        ws = await session.ws_connect(self.ws_url(command), protocols=("tty",), max_msg_size=0)
        await ws.send_str(HELLO)
        return ws

    async def throughput(self, session: aiohttp.ClientSession, command: str) -> tuple[int, float]:
        """Terminal bytes of `command` and the seconds from the go keystroke to its end."""
        ws = await self.connect(session, "read go; " + command)
        try:
            await ws.send_bytes(INPUT + b"\r")
            started = time.perf_counter()
            total = 0
            async for message in ws:
                if message.type == aiohttp.WSMsgType.BINARY and message.data[0] == OUTPUT:
                    total += len(message.data) - 1
            return total, time.perf_counter() - started
        finally:
            await ws.close()

    async def echo(
        self, session: aiohttp.ClientSession, samples: int, pause: float, wait: float
    ) -> list[float]:
        ws = await self.connect(session, "exec cat")
        try:
            latencies: list[float] = []
            for _ in range(samples):
                started = time.perf_counter()
                await ws.send_bytes(INPUT + b"x")
                while True:
                    try:
                        message = await asyncio.wait_for(ws.receive(), wait)
                    except TimeoutError:
                        break  # a lost sample, as in the other peers' loops
                    if message.type != aiohttp.WSMsgType.BINARY:
                        raise RuntimeError(f"ttyd socket ended: {message}")
                    if message.data[0] == OUTPUT and b"x" in message.data[1:]:
                        latencies.append(time.perf_counter() - started)
                        break
                if pause:
                    await asyncio.sleep(pause)
            return latencies
        finally:
            await ws.close()

    def flood_readers(self, count: int, cwd: Path) -> subprocess.Popen[bytes]:
        """A separate process with `count` ttyd tabs, each reading a `yes` flood."""
        url = self.ws_url("exec yes 'flood flood flood'")
        return flood_readers_process(url, count, cwd, protocols=("tty",), hello=HELLO)


def flood_readers_process(
    url: str,
    count: int,
    cwd: Path,
    *,
    protocols: tuple[str, ...] = (),
    hello: str | None = None,
) -> subprocess.Popen[bytes]:
    """A separate process with `count` WebSocket clients of `url` that read everything (after
    sending `hello`, when given): the tabs beside which bench/terminals.py measures echoes."""
    greet = f"await ws.send_str({hello!r})" if hello is not None else "pass"
    code = f"""
import asyncio, aiohttp
async def tab(session):
    async with session.ws_connect({url!r}, protocols={protocols!r}, max_msg_size=0) as ws:
        {greet}
        async for message in ws:
            pass
async def main():
    async with aiohttp.ClientSession() as session:
        await asyncio.gather(*(tab(session) for _ in range({count})))
asyncio.run(main())
"""
    return subprocess.Popen([sys.executable, "-c", code], cwd=str(cwd))
