"""How service management fails: a service that dies, lies or ignores SIGTERM (real processes)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from desktop.app import service
from desktop.app.process import desk_serve_pids
from desktop.config import Settings, load_settings
from desktop.process.liveness import is_alive

# A stand-in for `desk serve` that takes the same arguments (so it looks like one in /proc).
IGNORES_SIGTERM = """
import json, os, signal, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print(json.dumps({"url": "http://127.0.0.1:9", "token": "fake", "pid": os.getpid()}), flush=True)
signal.pause()
"""


@pytest.fixture
def fake_settings(tmp_path: Path) -> Settings:
    return load_settings(tmp_path / "data", tmp_path / "run")


def fake_serve(monkeypatch: pytest.MonkeyPatch, code: str) -> None:
    def command(*args: str) -> list[str]:
        return [sys.executable, "-c", code, *args]

    monkeypatch.setattr(service, "desk_command", command)


def test_service_that_exits_early_is_reported_with_its_log(
    fake_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_serve(monkeypatch, "import sys; sys.stderr.write('database is locked\\n'); sys.exit(3)")
    with pytest.raises(service.ServiceError) as failure:
        service.start_service(fake_settings)
    assert "exited with status 3" in str(failure.value)
    assert "database is locked" in str(failure.value)
    assert not fake_settings.service_registration_path.exists()


def test_garbage_ready_line_is_refused_and_the_process_stopped(
    fake_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = "import os, signal; print('secret-token ready', flush=True); signal.pause()"
    fake_serve(monkeypatch, code)
    with pytest.raises(service.ServiceError) as failure:
        service.start_service(fake_settings)
    assert "not JSON" in str(failure.value)
    assert "secret-token" not in str(failure.value), "the ready line may hold the token"
    assert not fake_settings.service_registration_path.exists()
    assert desk_serve_pids(fake_settings.data_dir, fake_settings.runtime_dir) == []


def test_silent_service_times_out(fake_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_serve(monkeypatch, "import signal; signal.pause()")
    monkeypatch.setattr(service, "START_TIMEOUT", 0.5)
    with pytest.raises(service.ServiceError, match="ready line within"):
        service.start_service(fake_settings)
    assert desk_serve_pids(fake_settings.data_dir, fake_settings.runtime_dir) == []


def test_service_ignoring_sigterm_is_killed_after_the_timeout(
    fake_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_serve(monkeypatch, IGNORES_SIGTERM)
    started = service.start_service(fake_settings)
    pid = started["pid"]
    assert isinstance(pid, int)
    assert is_alive(pid)
    stopped = service.stop_service(fake_settings, timeout=0.3)
    assert stopped["killed"] is True
    assert not is_alive(pid)
    assert not fake_settings.service_registration_path.exists()


def test_stop_refuses_a_bad_timeout(fake_settings: Settings) -> None:
    with pytest.raises(ValueError, match="timeout"):
        service.stop_service(fake_settings, timeout=0)
    assert not fake_settings.data_dir.exists(), "a refused call changes nothing"
