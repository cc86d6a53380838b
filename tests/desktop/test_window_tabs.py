"""The `desk` window under Xvfb showing three terminal tabs in three states (issue 4)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.desk import api_call
from tests.support.wait import wait_until
from tests.support.window import Window

pytestmark = pytest.mark.desktop

ARTIFACT = Path(__file__).resolve().parents[1] / "artifacts" / "window-three-tabs.png"


@dataclass(frozen=True)
class Api:
    url: str
    token: str

    def create(self, title: str, args: list[str]) -> str:
        body = {"command": "bash", "args": args, "title": title, "env": {"PS1": "$ "}}
        info = api_call(self.url, self.token, "POST", "/api/pty", body)
        assert isinstance(info, dict)
        return str(info["id"])

    def info(self, pty_id: str) -> dict[str, Any]:
        value = api_call(self.url, self.token, "GET", f"/api/pty/{pty_id}")
        assert isinstance(value, dict)
        return value


def image_stats(png: Path) -> tuple[float, int]:
    """(standard deviation of the pixel values, 0..1; number of distinct colours)."""
    done = subprocess.run(
        ["convert", str(png), "-format", "%[fx:standard_deviation] %k", "info:"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    deviation, colours = done.stdout.split()
    return float(deviation), int(colours)


def test_window_shows_three_tabs_in_different_states(window: Window) -> None:
    # The managed service first, with three terminals: the window then opens onto them.
    registration = window.desk.json("service", "start")
    token = (window.desk.data_dir / "auth-token").read_text().strip()
    api = Api(url=str(registration["url"]), token=token)
    shell = api.create("shell", ["--norc", "--noprofile"])
    ok = api.create("done", ["--norc", "--noprofile", "-c", "exit 0"])
    failed = api.create("failed", ["--norc", "--noprofile", "-c", "exit 3"])
    wait_until(lambda: api.info(ok)["status"] == api.info(failed)["status"] == "exited")
    assert api.info(ok)["exit_code"] == 0
    assert api.info(failed)["exit_code"] == 3
    assert api.info(shell)["status"] == "running"

    process = window.launch(autoclose=True)
    try:
        _, err = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise
    assert process.returncode == 0, err
    report = window.report()
    assert report["errors"] == [], report
    assert report["service_pid"] == registration["pid"], "the window used the running service"
    state = report["state"]
    assert isinstance(state, dict)
    assert state["connected"] is True
    assert state["loaded"] is True, state
    tabs = {tab["id"]: tab for tab in state["tabs"]}
    assert set(tabs) == {shell, ok, failed}, state
    assert [tabs[i]["title"] for i in state["order"]] == ["shell", "done", "failed"]
    assert tabs[ok]["status"] == "exited-ok"
    assert tabs[failed]["status"] == "exited-error"
    # Attached by now, or still connecting: running either way, never exited.
    assert tabs[shell]["status"] in {"running", "reconnecting"}, tabs[shell]
    assert state["activeTerminal"] == shell
    # The native window's title follows the page's: the tab in view, then the app.
    assert report["window_title"] == "shell — Desk", report["window_title"]

    screenshot = report["screenshot"]
    assert isinstance(screenshot, str)
    deviation, colours = image_stats(Path(screenshot))
    assert deviation > 0.02, f"blank screenshot ({deviation}, {colours})"
    assert colours >= 16, f"blank screenshot ({deviation}, {colours})"
    ARTIFACT.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(screenshot, ARTIFACT)

    # Quitting the window stopped the service and the PTY host.
    wait_until(lambda: not window.desk.leftovers(), timeout=15)
    assert not window.desk.registration_path.exists()
