"""The one-hop baseline: a minimal aiohttp server that reads the PTY itself (ttyd's shape).

One process, one event loop between the PTY and the WebSocket, nothing else: no ring, no
replay, no screen model, no flow control beyond the socket's own back-pressure. Benchmarks
measure Desk against it in the same run (bench/terminals.py, bench/ui_terminal.py).

Run: .venv/bin/python bench/onehop.py [--port 0] [--loop uvloop|asyncio] [--page FILE]
Prints `{"url": ...}` when listening. `GET /ws?command=SHELL-CODE[&cols=&rows=]` spawns
`sh -c SHELL-CODE` in a PTY; binary frames in are written to the PTY, output goes out as
binary frames (one per read of up to 256 KiB); the socket closes when the PTY ends.
Text frames `{"type": "resize", "cols", "rows"}` resize it, `{"type": "pause"}` and
`{"type": "resume"}` stop and restart reading the PTY (ttyd's flow control, which a page
needs so a flood does not overrun xterm.js's write buffer); anything else is ignored.
`GET /` serves `--page` (a bare xterm.js page for bench/ui_terminal.py), if given, with the
page's folder under `/static/` and web/node_modules under `/node_modules/`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
from pathlib import Path

from aiohttp import WSMsgType, web

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from desktop.native import spawn  # noqa: E402

READ_BYTES = 256 * 1024


async def terminal(request: web.Request) -> web.StreamResponse:
    command = request.query.get("command", "exec bash --norc --noprofile")
    cols = int(request.query.get("cols", "80"))
    rows = int(request.query.get("rows", "24"))
    socket = web.WebSocketResponse(compress=False, max_msg_size=1024 * 1024)
    await socket.prepare(request)
    env = dict(os.environ, TERM="xterm-256color", PS1="$ ")
    process = spawn(["sh", "-c", command], env=env, cwd="/", cols=cols, rows=rows)
    loop = asyncio.get_running_loop()
    buffer = bytearray(READ_BYTES)
    readable = asyncio.Event()
    loop.add_reader(process.fd, readable.set)
    # Paused: no reader registered (a level-triggered reader would spin on unread output).
    paused = False

    def flow(kind: object) -> None:
        nonlocal paused
        if kind == "pause" and not paused and not output.done():
            paused = True
            loop.remove_reader(process.fd)
        elif kind == "resume" and paused and not output.done():
            paused = False
            loop.add_reader(process.fd, readable.set)
            readable.set()

    async def pump() -> None:
        try:
            with contextlib.suppress(ConnectionError):
                await read_loop()
        finally:
            # Before the fd is closed: a stale registration would swallow the next one's events.
            loop.remove_reader(process.fd)
        await socket.close()

    async def read_loop() -> None:
        while True:
            await readable.wait()
            readable.clear()
            try:
                count = process.read_into(buffer)
            except (EOFError, OSError):
                return
            if count:
                await socket.send_bytes(bytes(buffer[:count]))
                if not paused:
                    readable.set()  # maybe more: read until empty

    output = asyncio.ensure_future(pump())
    try:
        async for message in socket:
            if message.type == WSMsgType.BINARY:
                os.write(process.fd, message.data)
            elif message.type == WSMsgType.TEXT:
                with contextlib.suppress(ValueError, KeyError, TypeError, OSError):
                    parsed = json.loads(message.data)
                    if parsed.get("type") == "resize":
                        process.resize(int(parsed["cols"]), int(parsed["rows"]))
                    else:
                        flow(parsed.get("type"))
    finally:
        output.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await output
        with contextlib.suppress(OSError):
            process.signal_group(signal.SIGKILL)
        process.close()
    return socket


def make_app(page: Path | None) -> web.Application:
    app = web.Application()
    app.router.add_get("/ws", terminal)
    if page is not None:
        assets = page.parent

        async def index(request: web.Request) -> web.StreamResponse:
            return web.FileResponse(page)

        app.router.add_get("/", index)
        app.router.add_static("/static/", assets)
        app.router.add_static("/node_modules/", ROOT / "web" / "node_modules")
    return app


async def serve(port: int, page: Path | None) -> None:
    runner = web.AppRunner(make_app(page))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    bound = runner.addresses[0][1]
    print(json.dumps({"url": f"http://127.0.0.1:{bound}", "pid": os.getpid()}), flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await stop.wait()
    await runner.cleanup()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--loop", choices=("uvloop", "asyncio"), default="uvloop")
    parser.add_argument("--page", type=Path, default=None)
    args = parser.parse_args()
    if args.loop == "uvloop":
        import uvloop

        uvloop.run(serve(args.port, args.page))
    else:
        asyncio.run(serve(args.port, args.page))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
