"""The shadow repositories' git processes die with the process that started them: one left
running by a killed service would race its successor's finishing of a half-done revert."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from desktop.process.liveness import is_alive
from tests.support.wait import wait_until

# A process that runs one git call through run_git, as the service does, then waits on it.
CALLER = """
import asyncio, sys
from desktop.checkpoints.git import run_git
asyncio.run(run_git(["checkout"], {"PATH": sys.argv[1]}))
"""


def test_a_git_still_running_when_its_service_is_killed_dies_with_it(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    pid_file = tmp_path / "git.pid"
    git = bin_dir / "git"  # a git that says its pid, then works for a minute
    git.write_text(
        f"#!/bin/sh\necho $$ > {pid_file}.new\nmv {pid_file}.new {pid_file}\nexec sleep 60\n"
    )
    git.chmod(0o755)
    path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    caller = subprocess.Popen([sys.executable, "-c", CALLER, path])
    pid = 0
    try:
        wait_until(pid_file.exists, what="the git call started")
        pid = int(pid_file.read_text())
        assert is_alive(pid)
        caller.send_signal(signal.SIGKILL)
        caller.wait(10)
        wait_until(lambda: not is_alive(pid), what=f"git {pid} outlived its killed caller")
    finally:
        caller.kill()
        caller.wait(10)
        if pid and is_alive(pid):
            os.kill(pid, signal.SIGKILL)
