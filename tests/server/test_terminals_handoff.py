"""The WebSocket handed to the PTY host: same protocol, same guarantees, one hop.

The service authenticates and checks the upgrade, then gives the connected socket to the
PTY host (SCM_RIGHTS), which writes the 101 and serves the attachment itself. These tests
pin what that must not change (flow control, takeover, bad-input answers, the secret) and
what it adds: a tab keeps its socket while the service is killed."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import socket
import struct
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestClient

from desktop.config import Settings
from desktop.ptyhost.hostfiles import handoff_path, read_host_registration
from tests.support.app import TOKEN
from tests.support.host import stop_host
from tests.support.service import Service, serve
from tests.support.terminals import AUTH, connect, create
from tests.support.wait import wait_for
from tests.support.websocket import WsReader

FLOOD = 20_000_000
TYPED = b"typed-after-the-kill\r\n"


@pytest.mark.restart
async def test_a_tab_keeps_its_websocket_and_its_output_across_a_kill_9_of_the_service(
    settings: Settings, tmp_path: Path
) -> None:
    # Numbered ticks until the test creates `stop`: output that goes on through the kill.
    stop = tmp_path / "stop"
    script = (
        f"read go; i=0; while [ ! -e {stop} ]; do echo tick$i; i=$((i+1)); sleep 0.01; done; "
        "echo FINISHED; exec cat"
    )
    service = serve(settings, test_hooks=False)
    second: Service | None = None
    try:
        headers = {"Authorization": f"Bearer {service.token}"}
        async with aiohttp.ClientSession(headers=headers) as session:
            created = await session.post(
                f"{service.url}/api/pty", json={"command": "sh", "args": ["-c", script]}
            )
            info = (await created.json())["data"]
            url = f"{service.url}/api/pty/{info['id']}/connect".replace("http", "ws", 1)
            reader = WsReader(await session.ws_connect(url, params={"cursor": "0"}))
            await reader.settle_replay()
            await reader.socket.send_bytes(b"\r")
            await reader.until_output(b"tick10\r\n")

            service.kill()  # kill -9: the service is gone, the socket is not
            at_kill = len(reader.output)
            await reader.until(
                lambda r: b"tick" in r.output[at_kill:], what="ticks written after the kill"
            )
            stop.touch()
            await reader.until_output(b"FINISHED\r\n", within=30)
            assert not reader.closed
            assert not reader.socket.closed
            await reader.type_line("typed-after-the-kill")
            # The terminal's echo, then cat's copy of the line.
            await reader.until(lambda r: r.output.count(TYPED) == 2, what="the typed line")

            # Every byte exactly once: the same stream as a fresh replay from offset 0.
            second = serve(settings, test_hooks=False)
            url2 = f"{second.url}/api/pty/{info['id']}/connect".replace("http", "ws", 1)
            whole = WsReader(await session.ws_connect(url2, params={"role": "observer"}))
            await whole.until(lambda r: r.output.count(TYPED) == 2, what="the typed line")
            assert bytes(reader.output) == bytes(whole.output)
            ticks = re.findall(rb"tick(\d+)\r\n", bytes(reader.output))
            assert ticks == [b"%d" % i for i in range(len(ticks))]  # each tick once, in order
    finally:
        service.kill()
        if second is not None:
            second.kill()
        await stop_host(settings)


async def test_a_handed_off_controller_that_stops_acking_stops_the_pty_then_gets_every_byte(
    api: TestClient,
) -> None:
    info = await create(
        api,
        command="sh",
        args=["-c", f"read go; head -c {FLOOD} /dev/zero | tr '\\0' a; echo; echo END; exec cat"],
    )
    reader = await connect(api, info["id"], ack=False)
    await reader.type_line("")

    async def tail() -> int:
        got = await (await api.get(f"/api/pty/{info['id']}", headers=AUTH)).json()
        return int(got["data"]["output"]["tail"])

    # Without acks the window fills, the host stops reading the PTY, the tail stops growing.
    await reader.until(lambda r: len(r.output) > 256 * 1024, what="the first window")
    tails: list[int] = []

    async def stopped_growing() -> bool:
        tails.append(await tail())
        return len(tails) > 1 and tails[-1] == tails[-2]

    await wait_for(
        stopped_growing,
        within=10,
        what=lambda: f"the PTY kept being read without acks (tail {tails[-3:]})",
        interval=0.1,
    )
    last = tails[-1]
    assert last == await tail(), "the PTY kept being read without acks"
    assert last < 4 * 1024 * 1024 < FLOOD
    received = len(reader.output)
    assert received <= 1024 * 1024  # the window: nothing beyond it was sent
    reader.ack = True
    await reader.socket.send_str(json.dumps({"type": "ack", "bytes": received}))
    await reader.until_output(b"END\r\n", within=60)
    assert bytes(reader.output).count(b"a") == FLOOD


async def test_takeover_on_handed_off_sockets_moves_control_and_input(api: TestClient) -> None:
    info = await create(api)
    first = await connect(api, info["id"], attachment_id="tab-a")
    second = await connect(api, info["id"], attachment_id="tab-b", takeover="true")
    assert second.attached["role"] == "controller"
    changed = await first.until_type("controller_changed")
    assert changed["attachment_id"] == "tab-b"
    await first.socket.send_bytes(b"echo from-a\r")
    error = await first.until_type("error")
    assert "observer" in str(error["message"])
    await second.type_line("echo from-$((2*4))")
    await second.until_output(b"from-8\r\n")
    await first.until_output(b"from-8\r\n")
    assert b"from-a" not in second.output


async def test_an_oversized_message_is_closed_with_1009_and_the_terminal_lives_on(
    api: TestClient,
) -> None:
    info = await create(api)
    reader = await connect(api, info["id"])
    await reader.socket.send_bytes(b"x" * (1024 * 1024 + 1))
    await reader.until(lambda r: r.closed, what="the close")
    assert reader.socket.close_code == 1009
    again = await connect(api, info["id"])
    await again.type_line("echo alive-$((1+1))")
    await again.until_output(b"alive-2\r\n")


async def raw_upgrade(api: TestClient, terminal_id: str) -> tuple[Any, Any]:
    """A hand-made WebSocket client, to send what aiohttp's client refuses to."""
    reader, writer = await asyncio.open_connection(api.host, api.port)
    writer.write(
        (
            f"GET /api/pty/{terminal_id}/connect HTTP/1.1\r\n"
            f"Host: {api.host}:{api.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            f"Authorization: Bearer {TOKEN}\r\n\r\n"
        ).encode()
    )
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    assert head.startswith(b"HTTP/1.1 101"), head
    assert b"Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" in head
    return reader, writer


def masked(opcode: int, payload: bytes) -> bytes:
    mask = os.urandom(4)
    body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return bytes([0x80 | opcode, 0x80 | len(payload)]) + mask + body


async def close_code(reader: asyncio.StreamReader) -> int:
    """Read server frames until the close frame; its status code."""
    while True:
        first, second = await asyncio.wait_for(reader.readexactly(2), 10)
        length = second & 0x7F
        if length == 126:
            length = struct.unpack("!H", await reader.readexactly(2))[0]
        elif length == 127:
            length = struct.unpack("!Q", await reader.readexactly(8))[0]
        payload = await reader.readexactly(length)
        if first & 0x0F == 0x8:
            return int(struct.unpack("!H", payload[:2])[0])


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        (masked(0x3, b"reserved opcode"), 1002),
        (masked(0x1, b"\xff\xfe not utf-8"), 1007),
        # A ping longer than 125 bytes (control frames must be short).
        (bytes([0x89, 0x80 | 126]) + struct.pack("!H", 128) + os.urandom(4) + b"p" * 128, 1002),
    ],
    ids=["reserved-opcode", "invalid-utf8", "oversized-ping"],
)
async def test_bad_frames_on_a_handed_off_socket_get_the_usual_close_codes(
    api: TestClient, frame: bytes, code: int
) -> None:
    info = await create(api)
    reader, writer = await raw_upgrade(api, info["id"])
    try:
        writer.write(frame)
        assert await close_code(reader) == code
    finally:
        writer.close()
    # Nothing else changed: the terminal still runs and answers a new attachment.
    again = await connect(api, info["id"])
    await again.type_line("echo ok-$((6*7))")
    await again.until_output(b"ok-42\r\n")


async def test_text_garbage_on_a_handed_off_socket_gets_error_frames_and_changes_nothing(
    api: TestClient,
) -> None:
    info = await create(api)
    reader = await connect(api, info["id"])
    for garbage in ("not json", "[]", '{"type": "resize", "cols": 5000, "rows": 1}'):
        errors = len(reader.of_type("error"))
        await reader.socket.send_str(garbage)
        await reader.until(lambda r: len(r.of_type("error")) > errors, what=garbage)  # noqa: B023
    got = await (await api.get(f"/api/pty/{info['id']}", headers=AUTH)).json()
    assert got["data"]["size"] == {"cols": 80, "rows": 24}
    await reader.type_line("echo fine")
    await reader.until_output(b"fine\r\n")


def open_files(pid: int) -> set[str]:
    """What the descriptors of process `pid` point at (`socket:[inode]` for sockets)."""
    fds = Path(f"/proc/{pid}/fd")
    found = set()
    for fd in fds.iterdir():
        with contextlib.suppress(FileNotFoundError):  # closed while we looked
            found.add(os.readlink(fd))
    return found


async def test_the_handoff_socket_takes_nothing_without_the_secret(
    api: TestClient, settings: Settings
) -> None:
    info = await create(api)
    registration = read_host_registration(settings)
    assert registration is not None
    path = handoff_path(registration)
    assert path.stat().st_mode & 0o077 == 0
    victim = socket.create_connection((api.host, api.port))
    link = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        link.connect(str(path))
        message = {"type": "handoff", "secret": "wrong", "protocol": 1, "terminal": info["id"]}
        socket.send_fds(link, [json.dumps(message).encode()], [victim.fileno()])
        link.settimeout(10)
        answer = json.loads(link.recv(65536))
    finally:
        link.close()
    assert answer["ok"] is False
    assert answer["error"]["type"] == "auth.failed"
    got = await (await api.get(f"/api/pty/{info['id']}", headers=AUTH)).json()
    assert got["data"]["status"] == "running"
    # The host wrote nothing on the socket it was offered and kept no copy of it.
    victim.settimeout(0.5)
    with pytest.raises(TimeoutError):
        victim.recv(1)
    offered = f"socket:[{os.fstat(victim.fileno()).st_ino}]"
    await wait_for(
        lambda: offered not in open_files(registration.pid), what="the host to drop the socket"
    )
    victim.close()
