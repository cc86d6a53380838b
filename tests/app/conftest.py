"""Fixtures for the CLI tests: a `desk` on private dirs (helpers: tests/support/desk.py), and
the bundle the package tests share."""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.bundle import BundleBuild, folder_size
from tests.support.desk import PROJECT, Desk, cleanup, desk_argv, make_desk


@pytest.fixture
def desk(tmp_path: Path) -> Iterator[Desk]:
    handle = make_desk(tmp_path)
    try:
        yield handle
    finally:
        cleanup(handle)


@pytest.fixture
def serve_by_hand(desk: Desk) -> Iterator[tuple[subprocess.Popen[str], dict[str, object]]]:
    """`desk serve` in the foreground, finding its dirs through DESK_* only (no options)."""
    process = subprocess.Popen(
        [*desk_argv(), "serve"],
        env=desk.env,
        cwd=PROJECT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    ready = json.loads(process.stdout.readline())
    try:
        yield process, ready
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(15)


@pytest.fixture(scope="session")
def bundle(bundle_build: BundleBuild) -> Path:
    """The PyInstaller bundle (dist/Desk) the package tests share, once built."""
    folder, seconds = bundle_build.result()
    size = folder_size(folder)
    print(f"\nbundle: built in {seconds:.1f}s (in the background), {size / 2**20:.0f} MiB")
    return folder
