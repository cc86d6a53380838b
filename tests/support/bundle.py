"""The PyInstaller build the package tests check, started in the background well before them.

The build costs 35-45 s of one core and the package tests come near the end of the run, so
the session starts it when the first test under `EARLY_START` runs (tests that wait on
conditions and measure nothing) and the `bundle` fixture waits for it. Run alone, the
package tests start it themselves.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.support.desk import PROJECT, Desk

EARLY_START = PROJECT / "tests" / "server"
BUILD_TIMEOUT = 800.0


class BundleBuild:
    """One `pyinstaller build.spec` into a private directory, removed by `discard`."""

    def __init__(self) -> None:
        self.out = Path(tempfile.mkdtemp(prefix="desk-bundle-"))
        self.started = time.monotonic()
        self._log = (self.out / "pyinstaller.log").open("w")
        self.process = subprocess.Popen(
            [
                str(Path(sys.executable).parent / "pyinstaller"),
                "--noconfirm",
                "--log-level",
                "WARN",
                "--distpath",
                str(self.out / "dist"),
                "--workpath",
                str(self.out / "build"),
                "build.spec",
            ],
            cwd=PROJECT,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def result(self) -> tuple[Path, float]:
        """The bundle's folder and the build's wall time, once the build is done."""
        remaining = BUILD_TIMEOUT - (time.monotonic() - self.started)
        try:
            code = self.process.wait(max(1.0, remaining))
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise AssertionError(f"pyinstaller took over {BUILD_TIMEOUT:.0f}s") from None
        self._log.close()
        log = (self.out / "pyinstaller.log").read_text(errors="replace")
        assert code == 0, f"pyinstaller exited with {code}:\n{log[-4000:]}"
        return self.out / "dist" / "Desk", time.monotonic() - self.started

    def discard(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._log.close()
        shutil.rmtree(self.out, ignore_errors=True)  # ~400 MiB: not worth keeping


def bundle_env(desk: Desk) -> dict[str, str]:
    """`desk`'s environment for a bundle (or an installed package): it serves its own UI."""
    return {key: value for key, value in desk.env.items() if not key.startswith("DESK_WEB")}


def folder_size(path: Path) -> int:
    return sum(entry.lstat().st_size for entry in path.rglob("*"))
