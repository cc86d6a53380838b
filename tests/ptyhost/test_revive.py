"""Saving terminals when the app quits and reviving them on the next start."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import cast

from desktop.config import Settings
from desktop.process.liveness import is_alive
from desktop.ptyhost.hostfiles import read_host_registration
from tests.support.host import SHELL, HostFactory, attach, host_settings
from tests.support.wait import wait_for


async def test_shutdown_saves_and_the_next_host_revives(
    start_host: HostFactory, settings: Settings, tmp_path: Path
) -> None:
    host = await start_host()
    (tmp_path / "sub dir").mkdir()
    shell_info = await host.create({**SHELL, "cwd": str(tmp_path), "title": "my shell"})
    cat_info = await host.create({"command": "cat", "group": "tools"})
    shell = await attach(host, str(shell_info["id"]))
    await shell.type_line("cd 'sub dir' && echo before-quit")
    await shell.until_output(b"before-quit\r\n")
    cat = await attach(host, str(cat_info["id"]))
    await cat.type_line("catline")
    await cat.until(lambda r: r.output.count(b"catline") == 2)
    old_pid = host.pid

    assert await host.shutdown(save=True) == {"saved": 2}
    assert not is_alive(old_pid)
    saved_dir = settings.saved_terminals_dir
    assert stat.S_IMODE(saved_dir.stat().st_mode) == 0o700
    files = sorted(saved_dir.glob("*.json"))
    assert len(files) == 2
    assert all(stat.S_IMODE(path.stat().st_mode) == 0o600 for path in files)

    revived = await start_host()
    assert revived.pid != old_pid
    by_id = {info["id"]: info for info in await revived.list()}
    assert set(by_id) == {shell_info["id"], cat_info["id"]}
    new_shell = by_id[shell_info["id"]]
    assert new_shell["status"] == "running"
    assert new_shell["pid"] != shell_info["pid"]
    assert new_shell["cwd"] == str(tmp_path / "sub dir")
    assert new_shell["title"] == "my shell"
    reader = await attach(revived, str(shell_info["id"]), cursor=0)
    await reader.type_line('echo revived-in-$(basename "$PWD")')
    await reader.until_output(b"revived-in-sub dir\r\n")
    output = bytes(reader.output)
    assert output.index(b"before-quit") < output.index(b"restored") < output.index(b"revived-in")

    old_cat = by_id[cat_info["id"]]
    assert old_cat["status"] == "exited"
    assert old_cat["group"] == "tools"
    snapshot = await revived.snapshot(str(cat_info["id"]))
    assert "catline" in cast(list[str], snapshot["lines"])
    viewer = await attach(revived, str(cat_info["id"]), cursor=0)
    await viewer.until_type("exited")
    assert b"catline" in viewer.output
    assert list(saved_dir.glob("*.json")) == []


async def test_corrupt_saved_terminals_are_skipped(
    start_host: HostFactory, settings: Settings
) -> None:
    saved_dir = settings.saved_terminals_dir
    saved_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    (saved_dir / "pty_bad1.json").write_text("{not json")
    (saved_dir / "pty_bad2.json").write_text(json.dumps({"version": 1, "id": "pty_bad2"}))
    (saved_dir / "pty_bad3.json").write_bytes(b"\xff\xfe")
    host = await start_host()
    assert await host.list() == []
    info = await host.create(SHELL)
    assert info["status"] == "running"
    assert sorted(p.name for p in saved_dir.iterdir()) == [
        "pty_bad1.corrupt", "pty_bad2.corrupt", "pty_bad3.corrupt",
    ]  # fmt: skip


async def test_idle_host_saves_and_exits_alone(start_host: HostFactory, settings: Settings) -> None:
    quick = host_settings(settings, pty_host_idle_exit_seconds=1.0)
    host = await start_host(pty_host_idle_exit_seconds=1.0)
    await host.create(SHELL)
    pid = host.pid
    await host.close()
    await wait_for(lambda: not is_alive(pid), what="the idle host to exit")
    assert read_host_registration(quick) is None
    assert len(list(settings.saved_terminals_dir.glob("*.json"))) == 1
