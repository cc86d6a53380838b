"""Helpers for the browser tests: a restartable Desk service and views of the page."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.sync_api import Page

from desktop.process.liveness import is_alive
from tests.conftest import wait_until as wait_until  # re-exported for the browser tests

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "web"
DIST = WEB / "dist"
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def pid_alive(pid: int) -> bool:
    return is_alive(pid)


@dataclass
class Service:
    """`desk serve` in a subprocess, restartable on the same port with the same dirs."""

    data_dir: Path
    runtime_dir: Path
    port: int = 0
    url: str = ""
    token: str = ""
    process: subprocess.Popen[str] | None = None
    log: list[Path] = field(default_factory=list)

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["DESK_RUNTIME_DIR"] = str(self.runtime_dir)
        env["DESK_DATA_DIR"] = str(self.data_dir)
        env["DESK_WEB_DIST"] = str(DIST)  # the real build, whatever the caller's environment
        return env

    def start(self) -> None:
        assert self.process is None or self.process.poll() is not None, "already running"
        stderr_path = self.runtime_dir.parent / f"serve-{len(self.log)}.log"
        self.log.append(stderr_path)
        command = [sys.executable, "-m", "desktop", "serve", "--port", str(self.port)]
        command += ["--data-dir", str(self.data_dir)]
        with stderr_path.open("w") as stderr:
            self.process = subprocess.Popen(
                command,
                cwd=ROOT,
                env=self.env(),
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
            )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise AssertionError(f"desk serve exited: {stderr_path.read_text()}")
        ready = json.loads(line)
        self.url = ready["url"]
        self.token = ready["token"]
        self.port = int(self.url.rsplit(":", 1)[1])

    def kill(self) -> None:
        """kill -9: no shutdown code runs."""
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)

    def request(self, method: str, path: str, body: object | None = None) -> Any:
        """An API call with the Bearer token; returns the `data` payload (None for 204)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Authorization", f"Bearer {self.token}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=10) as response:
            raw = response.read()
        return json.loads(raw)["data"] if raw else None

    def pty_host_pid(self) -> int | None:
        try:
            registration = json.loads((self.runtime_dir / "pty-host.json").read_text())
        except (FileNotFoundError, ValueError):
            return None
        pid = registration.get("pid")
        return pid if isinstance(pid, int) else None


def service_reachable(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/api/health", timeout=2):
            return True
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False


# ---- helpers on the page ------------------------------------------------------------------


def sign_in(page: Page, svc: Service) -> None:
    page.goto(f"{svc.url}/?token={svc.token}")
    page.wait_for_function(
        "() => window.__desk && window.__desk.state().connection === 'connected'"
    )


def terminals(page: Page) -> list[dict[str, Any]]:
    return page.evaluate("() => window.__desk.terminals()")  # type: ignore[no-any-return]


def terminal(page: Page, pty_id: str) -> dict[str, Any]:
    for info in terminals(page):
        if info["id"] == pty_id:
            return info
    raise AssertionError(f"no tab for terminal {pty_id}")


def buffer_text(page: Page, pty_id: str) -> str:
    return page.evaluate("(id) => window.__desk.bufferText(id)", pty_id)  # type: ignore[no-any-return]


def buffer_lines(page: Page, pty_id: str) -> list[str]:
    return [line.rstrip() for line in buffer_text(page, pty_id).split("\n")]


def wait_for_line(page: Page, pty_id: str, line: str, timeout: float = 10.0) -> None:
    page.wait_for_function(
        "([id, line]) => (window.__desk.bufferText(id) || '').split('\\n')"
        ".some((l) => l.trimEnd() === line)",
        arg=[pty_id, line],
        timeout=timeout * 1000,
    )


def wait_for_status(page: Page, pty_id: str, status: str, timeout: float = 10.0) -> None:
    page.wait_for_function(
        "([id, status]) => window.__desk.terminals()"
        ".some((t) => t.id === id && t.status === status)",
        arg=[pty_id, status],
        timeout=timeout * 1000,
    )


def wait_attached(page: Page, pty_id: str, role: str = "controller", timeout: float = 10.0) -> None:
    page.wait_for_function(
        "([id, role]) => window.__desk.terminals()"
        ".some((t) => t.id === id && t.phase === 'live' && t.role === role)",
        arg=[pty_id, role],
        timeout=timeout * 1000,
    )


def type_line(page: Page, text: str) -> None:
    page.keyboard.type(text)
    page.keyboard.press("Enter")


# ---- terminal groups ----------------------------------------------------------------------

PLAIN_BASH: dict[str, Any] = {
    "command": "bash",
    "args": ["--norc", "--noprofile"],
    "env": {"PS1": "$ ", "TERM": "xterm-256color"},
}


def create_shell(service: Service, title: str, group: str | None = None) -> str:
    """A plain bash (`$ ` prompt) created through the API, in `group` when given, once it has
    printed its prompt."""
    body: dict[str, Any] = {**PLAIN_BASH, "title": title}
    if group is not None:
        body["group"] = group
    pty_id = str(service.request("POST", "/api/pty", body)["id"])
    wait_until(
        lambda: service.request("GET", f"/api/pty/{pty_id}")["output"]["tail"] >= 2,
        what=f"{title} prompt",
    )
    return pty_id


def group_tab_ids(page: Page, name: str) -> list[str]:
    """Terminal ids of the tabs in the tablist whose accessible name is `name`, in order."""
    tabs = page.get_by_role("tablist", name=name, exact=True).get_by_role("tab")
    return tabs.evaluate_all("(els) => els.map((el) => el.dataset.id)")  # type: ignore[no-any-return]
