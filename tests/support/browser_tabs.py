"""Helpers for the terminal-tab browser tests: screenshots per state, page geometry, and the
PTY host of a test service."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from playwright.sync_api import Page

from desktop.process.liveness import is_alive
from tests.support.browser_terminals import ARTIFACTS, create_shell, wait_attached
from tests.support.chromium import sign_in
from tests.support.service import ROOT, Service
from tests.support.wait import wait_until

SHOTS = ARTIFACTS / "terminal-tabs"


def shot(page: Page, name: str) -> Path:
    """A screenshot of the whole window for one state, under tests/artifacts/terminal-tabs/."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def open_ui(page: Page, service: Service, tabs: int) -> None:
    sign_in(page, service)
    page.wait_for_function(
        "(n) => window.__desk.state().loaded && window.__desk.terminals().length === n", arg=tabs
    )


def open_shells(page: Page, service: Service, *titles: str) -> list[str]:
    """Plain shells titled `titles` (created through the API), and the UI opened with each of
    them attached as controller; their ids, in order."""
    ids = [create_shell(service, title) for title in titles]
    open_ui(page, service, len(ids))
    for pty_id in ids:
        wait_attached(page, pty_id)
    return ids


def focus_terminal(page: Page, pty_id: str) -> None:
    page.locator(f"#pane-{pty_id} .xterm").click()


def pane_fit(page: Page, pty_id: str) -> dict[str, Any]:
    """The terminal's rows and the pixel heights that decide whether its last row shows."""
    return page.evaluate(  # type: ignore[no-any-return]
        """(id) => {
          const pane = document.getElementById(`pane-${id}`)
          const screen = pane.querySelector('.xterm-screen')
          const t = window.__desk.terminals().find((t) => t.id === id)
          const p = pane.getBoundingClientRect()
          const s = screen.getBoundingClientRect()
          return { rows: t.rows, cols: t.cols, paneTop: p.top, screenTop: s.top,
                   paneBottom: p.bottom, screenBottom: s.bottom,
                   paneHeight: p.height, screenHeight: s.height }
        }""",
        pty_id,
    )


def wait_fits(page: Page, pty_id: str, what: str) -> dict[str, Any]:
    """Waits until the terminal's screen lies inside its pane (its top and bottom rows are
    visible) and fills it to within a row or two."""

    def fits() -> dict[str, Any] | None:
        fit = pane_fit(page, pty_id)
        row = fit["screenHeight"] / max(1, fit["rows"])
        inside = (
            fit["screenBottom"] <= fit["paneBottom"] + 0.5
            and fit["screenTop"] >= fit["paneTop"] - 0.5
        )
        full = fit["paneHeight"] - fit["screenHeight"] < 2 * row + 8
        return fit if inside and full else None

    return wait_until(fits, what=what)  # type: ignore[no-any-return]


def desk_cli(service: Service, *args: str) -> subprocess.CompletedProcess[str]:
    """The real `desk` command against the test service's directories."""
    return subprocess.run(
        [sys.executable, "-m", "desktop", *args],
        cwd=ROOT,
        env=service.env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def quit_everything(service: Service) -> None:
    """What quitting the app does: the service stops, then `desk service stop --all` saves the
    terminals and ends the PTY host."""
    host = service.pty_host_pid()
    assert host is not None
    service.stop()
    done = desk_cli(service, "service", "stop", "--all")
    assert done.returncode == 0, done.stderr
    wait_until(lambda: not is_alive(host), timeout=15, what="PTY host gone")


def kill_pty_host(service: Service) -> int:
    host = service.pty_host_pid()
    assert host is not None
    os.kill(host, 9)
    wait_until(lambda: not is_alive(host), timeout=10, what="PTY host killed")
    return host


def reload_and_attach(page: Page, pty_id: str) -> None:
    page.reload()
    page.wait_for_function("() => window.__desk && window.__desk.state().loaded", timeout=20000)
    wait_attached(page, pty_id, timeout=20)
