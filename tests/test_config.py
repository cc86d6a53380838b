"""Settings, private files and the environment given to user programs."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from desktop.config import (
    ensure_private_dir,
    load_settings,
    read_json_file,
    user_environment,
    write_private_file,
)


def test_private_dir_and_file_modes(tmp_path: Path) -> None:
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o755)
    ensure_private_dir(loose)
    assert stat.S_IMODE(loose.stat().st_mode) == 0o700
    target = loose / "secret.json"
    write_private_file(target, '{"a": 1}')
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert read_json_file(target) == {"a": 1}
    assert list(loose.iterdir()) == [target]  # no temp file left behind


def test_corrupt_json_file_is_a_value_error(tmp_path: Path) -> None:
    path = tmp_path / "reg.json"
    path.write_text("{half")
    with pytest.raises(ValueError, match="Expecting property name"):
        read_json_file(path)
    path.write_text("[1]")
    with pytest.raises(ValueError, match="does not hold a JSON object"):
        read_json_file(path)
    assert read_json_file(tmp_path / "missing.json") is None


def test_settings_come_from_the_environment_and_a_bad_value_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DESK_DATA_DIR", str(tmp_path / "d"))
    monkeypatch.setenv("DESK_RUNTIME_DIR", str(tmp_path / "r"))
    monkeypatch.setenv("DESK_PTY_RING_BYTES", "65536")
    loaded = load_settings()
    assert loaded.data_dir == tmp_path / "d"
    assert loaded.pty_ring_bytes == 65536
    assert load_settings(data_dir=tmp_path / "x").data_dir == tmp_path / "x"
    monkeypatch.setenv("DESK_PTY_HOST_IDLE_EXIT", "soon")
    with pytest.raises(ValueError, match="DESK_PTY_HOST_IDLE_EXIT"):
        load_settings()


def test_user_environment_drops_bundle_variables() -> None:
    bundled = {
        "PATH": "/usr/bin",
        "LD_LIBRARY_PATH": "/opt/Desk/_internal",
        "LD_LIBRARY_PATH_ORIG": "/usr/local/lib",
        "_PYI_APPLICATION_HOME_DIR": "/opt/Desk/_internal",
        "_MEIPASS2": "/opt/Desk/_internal",
    }
    assert user_environment(bundled) == {"PATH": "/usr/bin", "LD_LIBRARY_PATH": "/usr/local/lib"}
    plain = {"PATH": "/usr/bin", "LD_LIBRARY_PATH": "/mine"}
    assert user_environment(plain) == plain
