"""A private Xvfb display (1280x800) for the window tests, the bundle test and bench/startup."""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import dataclass, field

from desktop.process.liveness import wait_for_exit
from tests.support.wait import wait_until


@dataclass(frozen=True)
class Display:
    name: str  # ":N"
    pid: int
    # Reaped by stop_xvfb: a Popen collected while it still counts as running warns.
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False, compare=False)


def start_xvfb() -> Display:
    """Xvfb on a free display number; -displayfd tells us which one once it accepts clients."""
    read_end, write_end = os.pipe()
    process = subprocess.Popen(
        [
            "Xvfb",
            *("-displayfd", str(write_end), "-screen", "0", "1280x800x24", "-nolisten", "tcp"),
            # An X server resets when its last client leaves and refuses connections while it
            # does: the next window in a module then died with "could not connect to display".
            "-noreset",
        ],
        pass_fds=(write_end,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    os.close(write_end)
    try:
        with os.fdopen(read_end, "rb") as pipe:
            number = pipe.readline().strip().decode()
        if not number.isdigit():
            raise RuntimeError("Xvfb did not report a display number")
        display = Display(name=f":{number}", pid=process.pid, process=process)
        wait_for_display(display.name, timeout=20.0)
        return display
    except BaseException:
        process.kill()
        process.wait()
        raise


def wait_for_display(name: str, timeout: float) -> None:
    def accepts() -> bool:
        done = subprocess.run(["xdpyinfo", "-display", name], capture_output=True, check=False)
        return done.returncode == 0

    wait_until(accepts, timeout=timeout, interval=0.05, what=f"display {name} to accept clients")


def stop_xvfb(display: Display) -> None:
    os.kill(display.pid, signal.SIGTERM)
    if display.process is not None:
        try:
            display.process.wait(10.0)
        except subprocess.TimeoutExpired:
            display.process.kill()
            display.process.wait(5.0)
        return
    if not wait_for_exit(display.pid, 10.0):
        os.kill(display.pid, signal.SIGKILL)
        wait_for_exit(display.pid, 5.0)
