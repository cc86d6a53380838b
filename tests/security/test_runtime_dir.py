"""The runtime dir in a shared temp dir (`desk-<uid>`, when there is no XDG_RUNTIME_DIR) is
used only when it is a real directory of this user: a planted symlink or another user's
directory is refused with a clear message, and a loose mode of our own is repaired."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pytest

from desktop.config import UnsafeDirectory, ensure_private_dir, load_settings

NOBODY = 65534


@pytest.fixture
def shared_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A world-writable sticky temp dir standing in for /tmp, and no XDG_RUNTIME_DIR."""
    shared = tmp_path / "shared-tmp"
    shared.mkdir()
    shared.chmod(0o1777)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.delenv("DESK_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("DESK_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    return shared


def runtime_name(shared: Path) -> Path:
    return shared / f"desk-{os.getuid()}"


def test_a_symlink_planted_in_the_shared_temp_dir_is_refused_and_never_followed(
    shared_tmp: Path, tmp_path: Path
) -> None:
    target = tmp_path / "attackers-dir"
    target.mkdir()
    runtime_name(shared_tmp).symlink_to(target)
    with pytest.raises(UnsafeDirectory, match="symbolic link"):
        load_settings()
    with pytest.raises(UnsafeDirectory, match="symbolic link"):
        ensure_private_dir(runtime_name(shared_tmp))
    assert list(target.iterdir()) == []


def test_another_users_directory_is_refused_even_when_it_is_world_writable(
    shared_tmp: Path,
) -> None:
    planted = runtime_name(shared_tmp)
    planted.mkdir(mode=0o777)
    planted.chmod(0o777)
    os.chown(planted, NOBODY, NOBODY)
    with pytest.raises(UnsafeDirectory, match="belongs to another user"):
        load_settings()
    with pytest.raises(UnsafeDirectory, match="belongs to another user"):
        ensure_private_dir(planted)
    assert list(planted.iterdir()) == []


def test_our_own_loose_directory_is_made_private_and_used(shared_tmp: Path) -> None:
    own = runtime_name(shared_tmp)
    own.mkdir()
    own.chmod(0o777)
    settings = load_settings()
    assert settings.runtime_dir == own.resolve()
    settings.ensure_dirs()
    assert stat.S_IMODE(own.stat().st_mode) == 0o700


def test_a_missing_runtime_dir_is_created_private(shared_tmp: Path) -> None:
    settings = load_settings()
    settings.ensure_dirs()
    info = os.lstat(runtime_name(shared_tmp))
    assert stat.S_ISDIR(info.st_mode)
    assert stat.S_IMODE(info.st_mode) == 0o700
