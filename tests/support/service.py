"""A real `desk serve` subprocess: started, restarted on the same port, stopped or killed -9,
and emptied between the tests that share it.

The one owner of "run the service for a test": the browser fixtures, the restart and crash
tests and the UI benchmarks all use it, so they start the service the same way."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.config import Settings
from desktop.process.liveness import is_alive
from tests.support.wait import wait_until

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "web"
DIST = WEB / "dist"


@dataclass
class Service:
    """`desk serve` in a subprocess, restartable on the same port with the same dirs.

    `test_hooks` turns on the service's test-only routes (DESK_TEST_HOOKS=1); otherwise the
    child inherits the caller's environment, with the real build of web/dist."""

    data_dir: Path
    runtime_dir: Path
    port: int = 0
    test_hooks: bool = False
    url: str = ""
    token: str = ""
    process: subprocess.Popen[str] | None = None
    log: list[Path] = field(default_factory=list)

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["DESK_RUNTIME_DIR"] = str(self.runtime_dir)
        env["DESK_DATA_DIR"] = str(self.data_dir)
        env["DESK_WEB_DIST"] = str(DIST)  # the real build, whatever the caller's environment
        if self.test_hooks:
            env["DESK_TEST_HOOKS"] = "1"
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
        line = self.process.stdout.readline()  # the ready line: the service is listening
        if not line:
            self.process.wait(10)
            self._close_pipe()
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
        self._close_pipe()

    def stop(self) -> int | None:
        """SIGTERM, then SIGKILL if it does not exit; the exit status (None if never started)."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self._close_pipe()
        return self.process.returncode

    def _close_pipe(self) -> None:
        """The ready line's pipe, once the process is gone (else it leaks a file)."""
        if self.process is not None and self.process.stdout is not None:
            self.process.stdout.close()

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

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def pty_host_pid(self) -> int | None:
        try:
            registration = json.loads((self.runtime_dir / "pty-host.json").read_text())
        except (FileNotFoundError, ValueError):
            return None
        pid = registration.get("pid")
        return pid if isinstance(pid, int) else None


def serve(settings: Settings, *, test_hooks: bool = True) -> Service:
    """A started service on `settings`' dirs (test hooks on unless told otherwise)."""
    service = Service(settings.data_dir, settings.runtime_dir, test_hooks=test_hooks)
    service.start()
    return service


def service_reachable(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/api/health", timeout=2):
            return True
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False


@contextlib.contextmanager
def running_service(*, test_hooks: bool = False) -> Iterator[Service]:
    """A real `desk serve` on fresh dirs; afterwards it and its PTY host are ended."""
    base = Path(tempfile.mkdtemp(prefix="desk-b-", dir="/tmp"))
    svc = Service(data_dir=base / "data", runtime_dir=base / "run", test_hooks=test_hooks)
    svc.runtime_dir.mkdir(mode=0o700)
    svc.start()
    try:
        yield svc
    finally:
        host_pid = svc.pty_host_pid()
        svc.stop()
        # The PTY host outlives the service by design: end it (and so its shells) here.
        if host_pid is not None and is_alive(host_pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(host_pid, signal.SIGTERM)
            try:
                wait_until(lambda: not is_alive(host_pid), timeout=5, what="pty host exit")
            except AssertionError:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(host_pid, signal.SIGKILL)
        shutil.rmtree(base, ignore_errors=True)


# The UI preferences the page writes (docs/API.md): a shared service forgets them between tests.
UI_PREFS = ("terminal-order", "terminal-active")


def empty(svc: Service) -> None:
    """Brings a shared service back to what a fresh one shows: running, with no terminal, no
    session and no saved tab order (a test that stopped it gets it started again)."""
    if not svc.running():
        svc.start()
    for info in svc.request("GET", "/api/pty"):
        _delete(svc, f"/api/pty/{info['id']}")
    for session in svc.request("GET", "/api/session"):
        _delete(svc, f"/api/session/{session['id']}")  # a child may go with its parent first
    for key in UI_PREFS:
        svc.request("PUT", f"/api/ui/prefs/{key}", {"value": None})
    wait_until(lambda: svc.request("GET", "/api/pty") == [], what="every terminal deleted")


def _delete(svc: Service, path: str) -> None:
    try:
        svc.request("DELETE", path)
    except urllib.error.HTTPError as error:
        if error.code != 404:
            raise
