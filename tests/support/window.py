"""The `desk` window under a display, with its probe, and calls to the service it starts."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.support.desk import Desk, desk_argv
from tests.support.xvfb import Display


@dataclass
class Window:
    """`desk` (the window) with a display, private dirs and the probe enabled."""

    desk: Desk
    display: Display
    probe_path: Path

    def env(self, *, autoclose: bool, pick_folder: bool = False) -> dict[str, str]:
        env = {
            **self.desk.env,
            "DISPLAY": self.display.name,
            "QT_QPA_PLATFORM": "xcb",
            "DESK_WINDOW_PROBE": str(self.probe_path),
            "DESK_WINDOW_PROBE_TIMEOUT": "45",
            # QtWebEngine's HTTP cache goes to $XDG_CACHE_HOME/Desk: keep it in the test's dir.
            "XDG_CACHE_HOME": str(self.desk.data_dir.parent / "cache"),
        }
        env.pop("WAYLAND_DISPLAY", None)
        if autoclose:
            env["DESK_WINDOW_AUTOCLOSE"] = "1"
        if pick_folder:  # the probe presses New session, then Browse…
            env["DESK_WINDOW_PROBE_FOLDER"] = "1"
        return env

    def launch(self, *, autoclose: bool, pick_folder: bool = False) -> subprocess.Popen[str]:
        self.probe_path.unlink(missing_ok=True)
        return subprocess.Popen(
            desk_argv(),
            env=self.env(autoclose=autoclose, pick_folder=pick_folder),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    def report(self) -> dict[str, object]:
        value = json.loads(self.probe_path.read_text())
        assert isinstance(value, dict)
        return value
