"""A private Xvfb display and helpers to run the `desk` window under it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from desktop.process.liveness import wait_for_exit
from tests.shell.conftest import Desk, cleanup, desk_argv, make_desk


@dataclass(frozen=True)
class Display:
    name: str  # ":N"
    pid: int


def start_xvfb() -> Display:
    """Xvfb on a free display number; -displayfd tells us which one once it accepts clients."""
    read_end, write_end = os.pipe()
    process = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_end), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
        pass_fds=(write_end,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    os.close(write_end)
    try:
        with os.fdopen(read_end, "rb") as pipe:
            number = pipe.readline().strip().decode()
        if not number.isdigit():
            raise RuntimeError("Xvfb did not report a display number")
        display = Display(name=f":{number}", pid=process.pid)
        wait_for_display(display.name, timeout=20.0)
        return display
    except BaseException:
        process.kill()
        process.wait()
        raise


def wait_for_display(name: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        done = subprocess.run(["xdpyinfo", "-display", name], capture_output=True, check=False)
        if done.returncode == 0:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"display {name} does not accept connections")
        time.sleep(0.05)


def stop_xvfb(display: Display) -> None:
    os.kill(display.pid, signal.SIGTERM)
    if not wait_for_exit(display.pid, 10.0):
        os.kill(display.pid, signal.SIGKILL)
        wait_for_exit(display.pid, 5.0)


@pytest.fixture(scope="module")
def xvfb() -> Iterator[Display]:
    display = start_xvfb()
    try:
        yield display
    finally:
        stop_xvfb(display)


@dataclass
class Window:
    """`desk` (the window) with a display, private dirs and the probe enabled."""

    desk: Desk
    display: Display
    probe_path: Path

    def env(self, *, autoclose: bool) -> dict[str, str]:
        env = {
            **self.desk.env,
            "DISPLAY": self.display.name,
            "QT_QPA_PLATFORM": "xcb",
            "DESK_WINDOW_PROBE": str(self.probe_path),
            "DESK_WINDOW_PROBE_TIMEOUT": "45",
            # QtWebEngine's HTTP cache goes to $XDG_CACHE_HOME/Desk: keep it in the test's dir.
            "XDG_CACHE_HOME": str(self.desk.data_dir.parent / "cache"),
        }
        env.pop("WAYLAND_DISPLAY", None)
        if autoclose:
            env["DESK_WINDOW_AUTOCLOSE"] = "1"
        return env

    def launch(self, *, autoclose: bool) -> subprocess.Popen[str]:
        self.probe_path.unlink(missing_ok=True)
        return subprocess.Popen(
            desk_argv(),
            env=self.env(autoclose=autoclose),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    def report(self) -> dict[str, object]:
        value = json.loads(self.probe_path.read_text())
        assert isinstance(value, dict)
        return value


@pytest.fixture
def window(tmp_path: Path, xvfb: Display) -> Iterator[Window]:
    desk = make_desk(tmp_path)
    try:
        yield Window(desk=desk, display=xvfb, probe_path=tmp_path / "probe.json")
    finally:
        cleanup(desk)


def api_call(url: str, token: str, method: str, path: str, body: object | None = None) -> object:
    """A call to a running service's API (Bearer token, no proxy); returns `data`."""
    import urllib.request

    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{url}{path}", data=data, method=method)
    request.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=10) as response:
        raw = response.read()
    return json.loads(raw)["data"] if raw else None
