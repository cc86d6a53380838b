"""The PTY host and every program it starts (terminals, agent commands) carry none of Desk's
settings or secrets, and get the user's own umask."""

from __future__ import annotations

import asyncio
import base64
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.config import Settings
from desktop.ptyhost.client import PtyHostClient
from desktop.ptyhost.hostfiles import read_host_registration
from tests.support.host import attach
from tests.support.wait import DEADLINE

SECRET = "sk-desk-secret-4242"
PROBE = (
    "env | grep -c ^DESK_ || true; "
    "tr '\\0' '\\n' < /proc/$PPID/environ | grep -c ^DESK_ || true; "
    "env | grep -c desk-secret || true; "
    "tr '\\0' '\\n' < /proc/$PPID/environ | grep -c desk-secret || true; "
    "umask"
)


@pytest.fixture(autouse=True)
def desk_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The service's environment as a user would set it: a key and Desk's settings."""
    monkeypatch.setenv("DESK_API_KEY", SECRET)
    monkeypatch.setenv("DESK_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("DESK_PTY_RING_BYTES", "1048576")


@pytest.fixture
def user_umask() -> Iterator[int]:
    """The user's umask (0022): what programs started in Desk must create files with."""
    previous = os.umask(0o022)
    yield 0o022
    os.umask(previous)


def host_environ(settings: Settings) -> dict[str, str]:
    registration = read_host_registration(settings)
    assert registration is not None
    raw = Path(f"/proc/{registration.pid}/environ").read_bytes()
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {key.decode(): value.decode(errors="replace") for key, value in pairs}


async def test_the_pty_host_process_carries_no_desk_setting_or_secret(
    host: PtyHostClient, settings: Settings
) -> None:
    environ = host_environ(settings)
    assert [name for name in environ if name.startswith("DESK_")] == []
    assert SECRET not in "".join(environ.values())
    assert "PATH" in environ  # the user's own environment is still there


async def test_the_hosts_settings_file_is_private_and_holds_no_secret(
    host: PtyHostClient, settings: Settings
) -> None:
    path = settings.runtime_dir / "pty-host-settings.json"
    assert path.stat().st_mode & 0o777 == 0o600
    assert SECRET not in path.read_text()
    assert "pty_ring_bytes" in path.read_text()


async def test_a_terminal_sees_no_desk_setting_or_secret_and_the_users_umask(
    user_umask: int, host: PtyHostClient, tmp_path: Path
) -> None:
    info = await host.create({"command": "sh", "args": ["-c", PROBE], "cwd": str(tmp_path)})
    reader = await attach(host, str(info["id"]))
    await reader.until(lambda r: b"\n" + b"%04o" % user_umask in r.output, what="the probe")
    lines = reader.output.decode().split()
    assert lines == ["0", "0", "0", "0", f"{user_umask:04o}"]


async def test_an_agent_command_sees_no_desk_setting_or_secret_and_the_users_umask(
    user_umask: int, host: PtyHostClient, tmp_path: Path
) -> None:
    key = "job:ses_env:call_env"
    await host.job_start(key, PROBE + "; touch made.txt", str(tmp_path))
    info = await asyncio.wait_for(host.job_wait(key), DEADLINE)
    assert info["status"] == "exited"
    answer = await host.job_output(key)
    text = (base64.b64decode(str(answer["head"])) + base64.b64decode(str(answer["tail"]))).decode()
    assert text.split() == ["0", "0", "0", "0", f"{user_umask:04o}"]
    assert (tmp_path / "made.txt").stat().st_mode & 0o777 == 0o644
