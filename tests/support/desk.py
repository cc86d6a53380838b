"""The real `desk` CLI against private data/runtime dirs; never leave a process behind."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from desktop.config import Settings, load_settings
from desktop.process.liveness import is_alive, wait_for_exit

PROJECT = Path(__file__).resolve().parents[2]


def desk_argv() -> list[str]:
    """The installed console script when there is one, else the module."""
    script = Path(sys.executable).parent / "desk"
    return [str(script)] if script.exists() else [sys.executable, "-m", "desktop"]


def pids_with_env(name: str, value: str) -> list[int]:
    """Live processes whose environment has name=value (every descendant of a test run)."""
    needle = f"{name}={value}".encode() + b"\0"
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if (environ.startswith(needle) or b"\0" + needle in environ) and is_alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def kill_all(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue
        wait_for_exit(pid, 5.0)


def health(url: str, token: str) -> dict[str, object]:
    data = api_call(url, token, "GET", "/api/health")
    assert isinstance(data, dict)
    return data


@dataclass
class Desk:
    """The `desk` command with DESK_DATA_DIR/DESK_RUNTIME_DIR pointing at private dirs."""

    data_dir: Path
    runtime_dir: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def settings(self) -> Settings:
        return load_settings(self.data_dir, self.runtime_dir)

    @property
    def registration_path(self) -> Path:
        return self.runtime_dir / "service.json"

    def run(self, *args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*desk_argv(), *args],
            env=self.env,
            cwd=PROJECT,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def json(self, *args: str) -> dict[str, object]:
        """Run a command with `--json` that must succeed and print one JSON object."""
        done = self.run(*args, "--json")
        assert done.returncode == 0, f"desk {' '.join(args)} failed: {done.stderr}"
        value = json.loads(done.stdout)
        assert isinstance(value, dict)
        return value

    def registration(self) -> dict[str, object]:
        value = json.loads(self.registration_path.read_text())
        assert isinstance(value, dict)
        return value

    def leftovers(self) -> list[int]:
        return pids_with_env("DESK_DATA_DIR", str(self.data_dir))


def make_desk(tmp_path: Path) -> Desk:
    # Unix socket paths are limited to ~107 bytes: keep the runtime dir short.
    runtime = Path("/tmp") / f"desk-shell-{os.getpid()}-{abs(hash(tmp_path)) % 10**8}"
    env = {
        **os.environ,
        "DESK_DATA_DIR": str(tmp_path / "data"),
        "DESK_RUNTIME_DIR": str(runtime),
        "PYTHONUNBUFFERED": "1",
        # The window's probe reads the page's test hooks, which load only with this on.
        "DESK_TEST_HOOKS": "1",
    }
    return Desk(data_dir=tmp_path / "data", runtime_dir=runtime, env=env)


def cleanup(desk: Desk) -> None:
    """Stop everything the test may have started, politely first, then by force."""
    if desk.data_dir.exists():
        desk.run("service", "stop", "--all", timeout=60)
    kill_all(desk.leftovers())
    shutil.rmtree(desk.runtime_dir, ignore_errors=True)


def api_call(url: str, token: str, method: str, path: str, body: object | None = None) -> object:
    """A call to a running service's API (Bearer token, no proxy); returns `data`."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{url}{path}", data=data, method=method)
    request.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=10) as response:
        raw = response.read()
    return json.loads(raw)["data"] if raw else None


def create_terminal(url: str, token: str) -> dict[str, object]:
    """A plain /bin/sh terminal titled "kept", created through the running service's API."""
    data = api_call(url, token, "POST", "/api/pty", {"command": "/bin/sh", "title": "kept"})
    assert isinstance(data, dict)
    return data
