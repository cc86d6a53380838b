"""`desk` opens a real window under Xvfb, shows the UI logged in, and quits leaving nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from desktop.process.liveness import is_alive
from tests.support.desk import desk_argv
from tests.support.wait import wait_until
from tests.support.window import Window

pytestmark = pytest.mark.desktop


def distinct_colours(png: Path) -> int:
    from PyQt6.QtGui import QImage

    image = QImage(str(png))
    assert not image.isNull(), f"{png} is not an image"
    return len(
        {image.pixel(x, y) for x in range(0, image.width(), 4) for y in range(0, image.height(), 4)}
    )


def finish(process: subprocess.Popen[str], timeout: float = 120.0) -> tuple[str, str]:
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise
    assert process.returncode == 0, f"desk exited with {process.returncode}: {err}"
    return out, err


def assert_nothing_left(window: Window, report: dict[str, object]) -> None:
    service_pid = report["service_pid"]
    assert isinstance(service_pid, int)
    wait_until(lambda: not window.desk.leftovers(), timeout=15)
    assert not is_alive(service_pid)
    assert not window.desk.registration_path.exists()


def test_window_shows_the_ui_connected_and_quits_clean(window: Window) -> None:
    out, err = finish(window.launch(autoclose=True))
    report = window.report()
    assert report["errors"] == [], report
    assert report["connected"] is True
    assert report["sw_ready"] is True, "the UI registers its service worker"
    assert report["offline_ready"] is True, "the first visit leaves the shell to open offline"
    assert report["controlled_at_load"] is False, "nothing was registered before the first visit"
    # The first run's web storage is the data dir's (a first run once kept it in ~/.pywebview).
    assert (window.desk.data_dir / "webview" / "Service Worker" / "Database").is_dir()
    assert report["path"] == "/"
    assert report["token_in_url"] is False, "the login redirect drops the token from the URL"
    # The folder bridge works under the page's CSP: the native folder dialog is offered.
    assert report["folder_dialog"] is True
    screenshot = report["screenshot"]
    assert isinstance(screenshot, str)
    assert distinct_colours(Path(screenshot)) >= 3, "the screenshot is blank"
    assert_nothing_left(window, report)

    token = (window.desk.data_dir / "auth-token").read_text().strip()
    for text in (
        out,
        err,
        window.probe_path.read_text(),
        (window.desk.data_dir / "service.log").read_text(),
    ):
        assert token not in text

    # Second start: the worker registered on the first visit controls the page from the start
    # (same data dir storage, same origin).
    finish(window.launch(autoclose=True))
    again = window.report()
    assert again["errors"] == [], again
    assert again["connected"] is True
    assert again["origin"] == report["origin"], "the service kept its port, so the page its storage"
    assert again["controlled_at_load"] is True, again
    assert again["service_pid"] != report["service_pid"]
    assert_nothing_left(window, again)


def window_named(display: str, pattern: str) -> str:
    """The first X window whose name matches, or "" while there is none."""
    try:
        return xdotool(display, "search", "--name", pattern).split()[0]
    except (subprocess.CalledProcessError, IndexError):
        return ""


def test_browse_fills_the_folder_from_the_native_dialog_under_the_pages_csp(
    window: Window, tmp_path: Path
) -> None:
    chosen = tmp_path / "project"
    chosen.mkdir()
    process = window.launch(autoclose=True, pick_folder=True)
    display = window.display.name
    # The probe pressed Browse…: Qt's folder dialog opens; a person types a path and Enter.
    # A window that exits or a probe that gives up first fails the test with what it said.
    dialog = wait_until(
        lambda: (
            window_named(display, "^Open folder$")
            or window.probe_path.exists()
            or process.poll() is not None
        ),
        timeout=90,
        what="the native folder dialog",
    )
    if not isinstance(dialog, str):
        _, err = finish(process)  # a window that crashed fails here, with its stderr
        report = window.report() if window.probe_path.exists() else "no probe report"
        raise AssertionError(f"no dialog opened: {report}\n{err[-2000:]}")
    xdotool(display, "windowfocus", "--sync", dialog)  # no window manager under Xvfb
    xdotool(display, "type", "--delay", "5", str(chosen))
    xdotool(display, "key", "Return")
    finish(process)
    report = window.report()
    assert report["errors"] == [], report
    assert report["folder_picked"] == str(chosen)


def test_first_window_opens_centred_with_its_header_on_screen(window: Window) -> None:
    assert not (window.desk.data_dir / "window.json").exists(), "a first run saves no geometry"
    finish(window.launch(autoclose=True))
    report = window.report()
    assert report["connected"] is True
    placed = report["window"]
    assert isinstance(placed, dict)
    # Xvfb's screen is 1280x800 (tests/support/xvfb.py); the default window is 1200x800.
    assert placed["y"] >= 0, f"the header is above the screen: {placed}"
    assert placed["x"] >= 0, placed
    assert placed["x"] + placed["width"] <= 1280, placed
    assert placed["y"] + placed["height"] <= 800, f"the bottom is below the screen: {placed}"
    left, right = placed["x"], 1280 - placed["x"] - placed["width"]
    assert abs(left - right) <= 2, f"not centred: {placed}"


def xdotool(display: str, *args: str) -> str:
    done = subprocess.run(
        ["xdotool", *args],
        env={**os.environ, "DISPLAY": display},
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout


def test_window_keeps_size_and_position_and_quits_on_sigterm(window: Window) -> None:
    geometry_file = window.desk.data_dir / "window.json"
    window.desk.data_dir.mkdir(mode=0o700, parents=True)
    geometry_file.write_text(json.dumps({"x": 60, "y": 40, "width": 900, "height": 640}))

    process = window.launch(autoclose=False)
    try:
        wait_until(window.probe_path.exists, timeout=90)
        report = window.report()
        assert report["connected"] is True
        assert report["window"] == {"x": 60, "y": 40, "width": 900, "height": 640}

        # A second `desk` for the same data dir leaves the open window (and its service) alone.
        second = subprocess.run(
            desk_argv(),
            env=window.env(autoclose=True),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert second.returncode == 0
        assert "already open" in second.stderr
        assert is_alive(int(str(report["service_pid"])))

        # Move and resize it the way a window manager would.
        ids = xdotool(
            window.display.name, "search", "--sync", "--onlyvisible", "--pid", str(process.pid)
        )
        window_id = ids.split()[0]
        xdotool(window.display.name, "windowsize", "--sync", window_id, "1000", "700")
        xdotool(window.display.name, "windowmove", "--sync", window_id, "30", "20")

        def saved_geometry() -> tuple[object, ...]:
            saved = json.loads(geometry_file.read_text())
            return (saved["x"], saved["y"], saved["width"], saved["height"])

        # Written as soon as the window settles, before any quit.
        wait_until(lambda: saved_geometry() == (30, 20, 1000, 700), timeout=20)
        geometry_file.write_text(json.dumps({"x": 1, "y": 1, "width": 900, "height": 640}))
        process.send_signal(signal.SIGTERM)
        finish(process)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()

    saved = json.loads(geometry_file.read_text())
    assert (saved["x"], saved["y"], saved["width"], saved["height"]) == (30, 20, 1000, 700)
    assert_nothing_left(window, report)

    finish(window.launch(autoclose=True))
    assert window.report()["window"] == {"x": 30, "y": 20, "width": 1000, "height": 700}


def test_window_reports_a_service_that_cannot_start(window: Window) -> None:
    # A directory where the service log goes: the service cannot be started.
    (window.desk.data_dir / "service.log").mkdir(parents=True)
    process = window.launch(autoclose=True)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 1
    assert "service.log" in err
    assert not window.probe_path.exists()
    wait_until(lambda: not window.desk.leftovers(), timeout=15)
