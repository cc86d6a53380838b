"""`desk self-test`: prove this installation works end to end, in a throwaway data dir.

Starts a real service (and through it a PTY host), checks that the UI is served, opens a
terminal running `echo`, reads its output over the WebSocket, then stops everything.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import sys
import tempfile
from pathlib import Path

import aiohttp

from desktop.config import desk_command, load_settings

MARKER = "desk-self-test-ok"
STEP_TIMEOUT = 30.0


class SelfTestError(Exception):
    pass


async def _start_service(
    data: Path, runtime: Path
) -> tuple[asyncio.subprocess.Process, dict[str, str]]:
    argv = desk_command(
        "serve", "--port", "0", "--data-dir", str(data), "--runtime-dir", str(runtime)
    )
    proc = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), STEP_TIMEOUT)
    if not line:
        err = await proc.stderr.read() if proc.stderr else b""
        raise SelfTestError(f"the service did not start: {err.decode(errors='replace')[-2000:]}")
    ready = json.loads(line)
    return proc, {"url": str(ready["url"]), "token": str(ready["token"])}


async def _check_ui(http: aiohttp.ClientSession, url: str) -> None:
    async with http.get(url + "/") as response:
        body = await response.text()
        if response.status != 200 or "<html" not in body.lower():
            raise SelfTestError(f"the UI is not served (HTTP {response.status})")
    print("ok   web UI served")


async def _run_echo(http: aiohttp.ClientSession, url: str) -> None:
    spec = {"command": "/bin/sh", "args": ["-c", f"echo {MARKER.replace('ok', '')}$((1))ok"]}
    async with http.post(url + "/api/pty", json=spec) as response:
        if response.status != 201:
            raise SelfTestError(f"creating a terminal failed: {await response.text()}")
        info = (await response.json())["data"]
    print(f"ok   terminal {info['id']} created (pid {info['pid']})")
    seen = b""
    async with http.ws_connect(f"{url}/api/pty/{info['id']}/connect?cursor=0") as ws:
        async for message in ws:
            if message.type == aiohttp.WSMsgType.BINARY:
                seen += message.data
            elif message.type == aiohttp.WSMsgType.TEXT:
                event = json.loads(message.data)
                if event.get("type") == "exited":
                    break
            else:
                break
    expected = MARKER.replace("ok", "") + "1ok"
    if expected.encode() not in seen:
        raise SelfTestError(f"the terminal did not echo {expected!r}; got {seen[-200:]!r}")
    print("ok   echo read back through the PTY host")
    async with http.delete(f"{url}/api/pty/{info['id']}") as response:
        if response.status not in (204, 404):
            raise SelfTestError(f"deleting the terminal failed: HTTP {response.status}")


async def _stop(proc: asyncio.subprocess.Process, data: Path, runtime: Path) -> None:
    if proc.returncode is None:
        proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), 10)
        except TimeoutError:
            proc.kill()
            await proc.wait()
    from desktop.ptyhost.launcher import shutdown_pty_host

    await asyncio.to_thread(
        shutdown_pty_host, load_settings(data_dir=data, runtime_dir=runtime), save=False
    )


async def _self_test() -> None:
    base = Path(tempfile.mkdtemp(prefix="desk-self-test-"))
    data, runtime = base / "data", base / "run"
    proc = None
    try:
        proc, ready = await _start_service(data, runtime)
        print(f"ok   service ready at {ready['url']}")
        headers = {"Authorization": f"Bearer {ready['token']}"}
        timeout = aiohttp.ClientTimeout(total=STEP_TIMEOUT)
        async with aiohttp.ClientSession(headers=headers, timeout=timeout) as http:
            await _check_ui(http, ready["url"])
            await _run_echo(http, ready["url"])
    finally:
        if proc is not None:
            await _stop(proc, data, runtime)
        shutil.rmtree(base, ignore_errors=True)


def run_self_test() -> int:
    try:
        asyncio.run(asyncio.wait_for(_self_test(), 4 * STEP_TIMEOUT))
    except (SelfTestError, TimeoutError, OSError, aiohttp.ClientError) as exc:
        print(f"FAIL {exc or exc.__class__.__name__}", file=sys.stderr)
        return 1
    print("self-test passed")
    return 0
