"""A crashed PTY host loses its programs, not its terminals (issue 12, item 11): the host
autosaves each changed terminal; after a kill -9 the next host revives them from the last
save with a "recovered after a crash" marker and `revived: "recovered"` in their info."""

from __future__ import annotations

import base64
import json
import os
import signal
from pathlib import Path

import pytest

from desktop.config import Settings
from desktop.process.liveness import is_alive
from desktop.ptyhost.hostfiles import read_host_registration
from tests.support.host import SHELL, HostFactory, attach
from tests.support.wait import wait_for

INTERVAL = "0.3"


@pytest.fixture(autouse=True)
def quick_autosave(monkeypatch: pytest.MonkeyPatch) -> None:
    # The daemon reads it from the environment it inherits from the test.
    monkeypatch.setenv("DESK_PTY_AUTOSAVE_SECONDS", INTERVAL)


def autosave_dir(settings: Settings) -> Path:
    return settings.saved_terminals_dir / "autosave"


def autosaved(settings: Settings, terminal_id: str) -> dict[str, object] | None:
    try:
        value = json.loads((autosave_dir(settings) / f"{terminal_id}.json").read_text())
    except (FileNotFoundError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def autosaved_with(settings: Settings, terminal_id: str, cwd: str, text: bytes) -> bool:
    saved = autosaved(settings, terminal_id)
    if saved is None or saved["cwd"] != cwd:
        return False
    return text in base64.b64decode(str(saved["checkpoint"]))


async def crash(settings: Settings) -> None:
    registration = read_host_registration(settings)
    assert registration is not None
    os.kill(registration.pid, signal.SIGKILL)
    await wait_for(lambda: not is_alive(registration.pid), what="host dead")


async def test_a_killed_host_comes_back_from_its_last_autosave_marked_recovered(
    start_host: HostFactory, settings: Settings, tmp_path: Path
) -> None:
    host = await start_host()
    (tmp_path / "work").mkdir()
    info = await host.create({**SHELL, "cwd": str(tmp_path), "title": "kept"})
    terminal_id = str(info["id"])
    reader = await attach(host, terminal_id)
    await reader.type_line("cd work && echo before-$((6*7))")
    await reader.until_output(b"before-42\r\n")
    # The cwd change and the new output both reach the autosave within a few ticks.
    await wait_for(
        lambda: autosaved_with(settings, terminal_id, str(tmp_path / "work"), b"before-42"),
        what="autosave with the new folder and output",
    )
    mode = (autosave_dir(settings) / f"{terminal_id}.json").stat().st_mode & 0o777
    assert mode == 0o600

    await crash(settings)
    revived = await start_host()
    infos = {str(i["id"]): i for i in await revived.list()}
    assert set(infos) == {terminal_id}
    again = infos[terminal_id]
    assert again["revived"] == "recovered"
    assert again["status"] == "running"
    assert again["title"] == "kept"
    assert again["cwd"] == str(tmp_path / "work")
    viewer = await attach(revived, terminal_id, cursor=0)
    await viewer.type_line("echo now-in-$(basename $PWD)")
    await viewer.until_output(b"now-in-work\r\n")
    output = bytes(viewer.output)
    assert output.index(b"before-42") < output.index(b"recovered after a crash")
    assert output.index(b"recovered after a crash") < output.index(b"now-in-work")
    # The new host saves it again at once, so a second crash loses nothing either.
    await wait_for(
        lambda: autosaved_with(settings, terminal_id, str(tmp_path / "work"), b"recovered"),
        what="autosave by the new host",
    )


async def test_a_closed_terminal_stays_closed_after_a_crash(
    start_host: HostFactory, settings: Settings
) -> None:
    host = await start_host()
    kept = str((await host.create(dict(SHELL)))["id"])
    closed = str((await host.create(dict(SHELL)))["id"])
    await wait_for(lambda: autosaved(settings, kept) and autosaved(settings, closed))
    await host.delete(closed)
    await wait_for(lambda: autosaved(settings, closed) is None, what="its file removed")

    await crash(settings)
    revived = await start_host()
    assert [i["id"] for i in await revived.list()] == [kept]


async def test_a_clean_exit_leaves_nothing_to_recover(
    start_host: HostFactory, settings: Settings
) -> None:
    host = await start_host()
    discarded = str((await host.create(dict(SHELL)))["id"])
    await wait_for(lambda: autosaved(settings, discarded), what="autosaved")
    assert await host.shutdown(save=False) == {"saved": 0}
    assert list(autosave_dir(settings).glob("*.json")) == []

    host = await start_host()
    assert await host.list() == []
    quit_saved = str((await host.create(dict(SHELL)))["id"])
    await wait_for(lambda: autosaved(settings, quit_saved), what="autosaved")
    assert await host.shutdown(save=True) == {"saved": 1}
    assert list(autosave_dir(settings).glob("*.json")) == []
    host = await start_host()
    infos = await host.list()
    assert [(i["id"], i["revived"]) for i in infos] == [(quit_saved, "restored")]
