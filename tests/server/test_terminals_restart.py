"""Terminals outlive the service: kill -9 it, start another, reconnect with the cursor."""

from __future__ import annotations

import re
from pathlib import Path

import aiohttp
import pytest

from desktop.config import Settings
from desktop.ptyhost.hostfiles import read_host_registration
from tests.support.host import stop_host
from tests.support.service import Service, serve
from tests.support.websocket import WsReader

pytestmark = pytest.mark.restart


def ticker(stop: Path) -> str:
    """Numbered ticks until `stop` exists: output that goes on through the kill and the
    restart, however long they take."""
    return (
        f"read go; i=0; while [ ! -e {stop} ]; do echo tick$i; i=$((i+1)); sleep 0.01; done; "
        "echo FINISHED; exec cat"
    )


async def test_reconnect_after_service_kill_9_replays_missed_output(
    settings: Settings, tmp_path: Path
) -> None:
    stop = tmp_path / "stop"
    first = serve(settings, test_hooks=False)
    second: Service | None = None
    try:
        headers = {"Authorization": f"Bearer {first.token}"}
        async with aiohttp.ClientSession(headers=headers) as session:
            created = await session.post(
                f"{first.url}/api/pty", json={"command": "sh", "args": ["-c", ticker(stop)]}
            )
            assert created.status == 201
            info = (await created.json())["data"]
            ws_url = f"{first.url}/api/pty/{info['id']}/connect".replace("http", "ws", 1)
            socket = await session.ws_connect(ws_url, params={"cursor": "0"})
            reader = WsReader(socket)
            await reader.settle_replay()
            await socket.send_bytes(b"\r")
            await reader.until_output(b"tick20\r\n")
            cursor = reader.cursor
            seen = bytes(reader.output)
            host_pid = read_host_registration(settings).pid  # type: ignore[union-attr]

            first.kill()  # kill -9: no cleanup at all
            second = serve(settings, test_hooks=False)
            url2 = second.url
            again = await session.get(f"{url2}/api/pty/{info['id']}")
            assert again.status == 200
            info2 = (await again.json())["data"]
            assert info2["pid"] == info["pid"]
            assert info2["epoch"] == info["epoch"]
            assert read_host_registration(settings).pid == host_pid  # type: ignore[union-attr]

            ws_url2 = f"{url2}/api/pty/{info['id']}/connect".replace("http", "ws", 1)
            resumed = WsReader(
                await session.ws_connect(
                    ws_url2, params={"cursor": str(cursor), "epoch": info["epoch"]}
                )
            )
            await resumed.settle_replay()
            assert resumed.attached["replay"]["truncated"] is False
            assert resumed.replay_bytes > 0  # what the terminal wrote while no service ran
            stop.touch()
            await resumed.until_output(b"FINISHED\r\n", within=30)
            whole = WsReader(
                await session.ws_connect(ws_url2, params={"cursor": "0", "role": "observer"})
            )
            await whole.until_output(b"FINISHED\r\n")
            assert seen + bytes(resumed.output) == bytes(whole.output)
            ticks = re.findall(rb"tick(\d+)\r\n", bytes(whole.output))
            assert ticks == [b"%d" % i for i in range(len(ticks))]  # each tick once, in order
    finally:
        first.kill()
        if second is not None:
            second.kill()
        await stop_host(settings)
