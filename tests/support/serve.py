"""A real `desk serve` process for tests that restart or kill the service."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from desktop.config import Settings


@dataclass
class Served:
    proc: subprocess.Popen[str]
    url: str
    token: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=10)

    def kill(self) -> None:
        """kill -9: no shutdown hook runs."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)


def serve(settings: Settings, *, test_hooks: bool = True, log: Path | None = None) -> Served:
    env = {
        **os.environ,
        "DESK_DATA_DIR": str(settings.data_dir),
        "DESK_RUNTIME_DIR": str(settings.runtime_dir),
    }
    if test_hooks:
        env["DESK_TEST_HOOKS"] = "1"
    stderr = open(log, "a") if log else subprocess.DEVNULL  # noqa: SIM115 - owned by the child
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "desktop", "serve", "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env=env,
        )
    finally:
        if log:
            stderr.close()  # type: ignore[union-attr]
    assert proc.stdout is not None
    line = proc.stdout.readline()  # the ready line: the service is listening
    assert line, f"desk serve exited with {proc.wait()}"
    ready = json.loads(line)
    return Served(proc, str(ready["url"]), str(ready["token"]))
