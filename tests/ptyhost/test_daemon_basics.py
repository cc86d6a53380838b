"""The PTY host daemon: registration, secret, framing errors, terminal requests."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from typing import Any

import pytest

from desktop.config import Settings
from desktop.process.registration import HostRegistration
from desktop.ptyhost.client import PtyHostClient
from desktop.ptyhost.hostfiles import read_host_registration
from desktop.ptyhost.protocol import (
    HEADER,
    PROTOCOL_VERSION,
    PtyHostError,
    PtyHostUnavailable,
    encode_json,
)
from tests.support.host import SHELL, attach, shell


async def test_registration_is_private_and_points_at_a_private_socket(
    host: PtyHostClient, settings: Settings
) -> None:
    path = settings.pty_host_registration_path
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    raw = json.loads(path.read_text())
    assert set(raw) >= {"pid", "protocol", "socket", "secret"}
    assert raw["pid"] == host.pid != os.getpid()
    socket_dir = os.path.dirname(raw["socket"])
    assert stat.S_IMODE(os.stat(socket_dir).st_mode) == 0o700
    assert stat.S_ISSOCK(os.stat(raw["socket"]).st_mode)


async def test_create_list_get_update_delete(host: PtyHostClient, tmp_path) -> None:  # type: ignore[no-untyped-def]
    info = await host.create({**SHELL, "cwd": str(tmp_path), "title": "t1", "group": "g"})
    assert str(info["id"]).startswith("pty_")
    assert info["status"] == "running"
    assert isinstance(info["pid"], int)
    assert info["cwd"] == str(tmp_path)
    assert info["title"] == "t1"
    assert info["group"] == "g"
    assert info["size"] == {"cols": 80, "rows": 24}
    assert info["epoch"] == host.epoch
    assert [t["id"] for t in await host.list()] == [info["id"]]
    assert await host.list("other") == []
    assert [t["id"] for t in await host.list("g")] == [info["id"]]
    terminal_id = str(info["id"])
    updated = await host.update(
        terminal_id, {"title": "renamed", "size": {"cols": 100, "rows": 30}}
    )
    assert updated["title"] == "renamed"
    assert updated["size"] == {"cols": 100, "rows": 30}
    assert (await host.get(terminal_id))["title"] == "renamed"
    await host.delete(terminal_id)
    with pytest.raises(PtyHostError) as missing:
        await host.get(terminal_id)
    assert missing.value.status == 404
    assert await host.list() == []


@pytest.mark.parametrize(
    ("params", "kind"),
    [
        ({"size": {"cols": 0, "rows": 24}}, "request.invalid"),
        ({"size": {"cols": 80, "rows": 1001}}, "request.invalid"),
        ({"size": {"cols": "80", "rows": 24}}, "request.invalid"),
        ({"size": {"cols": True, "rows": 24}}, "request.invalid"),
        ({"size": [80, 24]}, "request.invalid"),
        ({"cwd": "/definitely/not/here"}, "pty.invalid_cwd"),
        ({"cwd": "/etc/passwd"}, "pty.invalid_cwd"),
        ({"cwd": "relative/dir"}, "pty.invalid_cwd"),
        ({"command": "no-such-command-desk"}, "pty.command_not_found"),
        ({"command": "/etc/passwd"}, "pty.command_not_found"),
        ({"command": 42}, "request.invalid"),
        ({"args": "ls"}, "request.invalid"),
        ({"args": [1]}, "request.invalid"),
        ({"env": {"A": 1}}, "request.invalid"),
        ({"env": ["A=1"]}, "request.invalid"),
        ({"env": {"A=B": "x"}}, "request.invalid"),
        ({"title": 5}, "request.invalid"),
        ({"group": ["g"]}, "request.invalid"),
    ],
)
async def test_bad_create_requests_are_refused_and_create_nothing(
    shared_host: PtyHostClient, params: dict[str, object], kind: str
) -> None:
    with pytest.raises(PtyHostError) as refused:
        await shared_host.create(params)
    assert refused.value.status == 400
    assert refused.value.type == kind
    assert refused.value.message
    assert await shared_host.list() == []


async def test_unknown_ids_and_bad_updates(host: PtyHostClient) -> None:
    for call in (
        host.get("pty_nope"),
        host.delete("pty_nope"),
        host.snapshot("pty_nope"),
        host.update("pty_nope", {"title": "x"}),
    ):
        with pytest.raises(PtyHostError) as missing:
            await call
        assert missing.value.status == 404
        assert missing.value.type == "pty.not_found"
    info = await shell(host)
    terminal_id = str(info["id"])
    bad_changes: list[dict[str, object]] = [
        {"size": {"cols": 0, "rows": 5}},
        {"title": 3},
        {"attachment_id": "bad id!"},
    ]
    for changes in bad_changes:
        with pytest.raises(PtyHostError) as bad:
            await host.update(terminal_id, changes)
        assert bad.value.status == 400
    after = await host.get(terminal_id)
    for field in ("title", "size", "status", "pid", "cwd", "command", "args"):
        assert after[field] == info[field]
    with pytest.raises(PtyHostError) as missing_attach:
        await attach(host, "pty_nope")
    assert missing_attach.value.status == 404
    bad_attaches: list[dict[str, Any]] = [
        {"cursor": -1},
        {"role": "boss"},
        {"attachment_id": "a b"},
    ]
    for bad_attach in bad_attaches:
        with pytest.raises(PtyHostError) as refused:
            await attach(host, terminal_id, **bad_attach)
        assert refused.value.status == 400


async def test_wrong_secret_is_refused_and_changes_nothing(
    host: PtyHostClient, settings: Settings
) -> None:
    await shell(host)
    registration = read_host_registration(settings)
    assert registration is not None
    forged = HostRegistration(**{**registration.to_dict(), "secret": "0" * 64})  # type: ignore[arg-type]
    from desktop.ptyhost.client import open_host_connection

    with pytest.raises(PtyHostUnavailable, match="Wrong secret"):
        await open_host_connection(forged)
    assert len(await host.list()) == 1


async def raw_connection(
    registration: HostRegistration,
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_unix_connection(registration.socket)


async def read_frame(reader: asyncio.StreamReader) -> dict[str, object]:
    length, kind = HEADER.unpack(await reader.readexactly(HEADER.size))
    assert kind == 1
    result = json.loads(await reader.readexactly(length))
    assert isinstance(result, dict)
    return result


@pytest.mark.parametrize(
    "garbage",
    [
        b"GET / HTTP/1.1\r\n\r\n",
        HEADER.pack(10, 99) + b"x" * 10,
        HEADER.pack(2**31, 1),
        HEADER.pack(5, 1) + b"nope!",
    ],
)
async def test_garbage_before_the_hello_gets_an_error_and_a_close(
    host: PtyHostClient, settings: Settings, garbage: bytes
) -> None:
    registration = read_host_registration(settings)
    assert registration is not None
    reader, writer = await raw_connection(registration)
    writer.write(garbage)
    error = await asyncio.wait_for(read_frame(reader), 5)
    assert error["type"] == "error"
    assert await asyncio.wait_for(reader.read(), 5) == b""
    writer.close()
    assert (await host.ping())["epoch"] == host.epoch


async def test_garbage_after_the_hello_closes_only_that_connection(
    host: PtyHostClient, settings: Settings
) -> None:
    info = await shell(host)
    watcher = await attach(host, str(info["id"]))
    registration = read_host_registration(settings)
    assert registration is not None
    reader, writer = await raw_connection(registration)
    writer.write(
        encode_json(
            {"type": "hello", "secret": registration.secret, "protocol": 1, "role": "control"}
        )
    )
    assert (await read_frame(reader))["type"] == "welcome"
    writer.write(encode_json({"id": 1, "op": "explode"}))
    answer = await read_frame(reader)
    assert answer["ok"] is False
    assert "Unknown operation" in str(answer["error"])
    writer.write(encode_json({"op": "list"}))  # no id: a protocol violation
    assert (await read_frame(reader))["type"] == "error"
    assert await asyncio.wait_for(reader.read(), 5) == b""
    writer.close()
    reader2, writer2 = await raw_connection(registration)
    writer2.write(
        encode_json(
            {"type": "hello", "secret": registration.secret, "protocol": 1, "role": "control"}
        )
    )
    assert (await read_frame(reader2))["type"] == "welcome"
    writer2.write(HEADER.pack(3, 42) + b"abc")
    assert (await read_frame(reader2))["type"] == "error"
    writer2.close()
    # The attachment and the control connection still work.
    await watcher.type_line("echo still-here")
    await watcher.until_output(b"still-here\r\n")
    assert len(await host.list()) == 1


async def test_a_hello_for_anything_but_control_is_refused(
    host: PtyHostClient, settings: Settings
) -> None:
    # Attachments have one path, the handed-off WebSocket: the host socket is control only.
    registration = read_host_registration(settings)
    assert registration is not None
    reader, writer = await raw_connection(registration)
    writer.write(
        encode_json(
            {
                "type": "hello",
                "secret": registration.secret,
                "protocol": PROTOCOL_VERSION,
                "role": "attach",
            }
        )
    )
    error = await read_frame(reader)
    assert error["error"]["type"] == "protocol.invalid_role"  # type: ignore[index]
    assert await asyncio.wait_for(reader.read(), 5) == b""
    writer.close()
    assert (await host.ping())["epoch"] == host.epoch


async def test_echo_through_an_attachment(host: PtyHostClient) -> None:
    info = await shell(host)
    reader = await attach(host, str(info["id"]))
    assert reader.attached["role"] == "controller"
    await reader.type_line("echo $((6*7))")
    await reader.until_output(b"42\r\n")


async def test_delete_hangs_up_then_kills_after_two_seconds(host: PtyHostClient) -> None:
    from desktop.process.liveness import is_alive
    from tests.support.wait import wait_for

    stubborn = await host.create(
        {"command": "sh", "args": ["-c", "trap '' HUP; echo armed; while :; do sleep 0.05; done"]}
    )
    polite = await host.create({"command": "sleep", "args": ["30"]})
    reader = await attach(host, str(stubborn["id"]))
    await reader.until_output(b"armed")
    loop = asyncio.get_running_loop()
    started = loop.time()
    await host.delete(str(stubborn["id"]))
    await host.delete(str(polite["id"]))
    assert await host.list() == []
    await wait_for(lambda: not is_alive(int(polite["pid"])), within=1.5, what="SIGHUP")  # type: ignore[call-overload]
    assert is_alive(int(stubborn["pid"]))  # type: ignore[call-overload]
    await wait_for(lambda: not is_alive(int(stubborn["pid"])), within=5, what="SIGKILL")  # type: ignore[call-overload]
    assert loop.time() - started >= 1.9
    await reader.until(lambda r: r.ended, what="attachment closed")
