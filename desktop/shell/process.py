"""Facts about other processes, read from /proc: alive, what they run, when they exit."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import time
from pathlib import Path

from desktop.config import default_data_dir, default_runtime_dir

# A process in one of these states has finished running: it only waits to be reaped.
_FINISHED_STATES = frozenset("ZXx")


def process_cmdline(pid: int) -> list[str] | None:
    """argv of `pid`; None when it is gone (a zombie has an empty argv, also None)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    if not raw:
        return None
    return [part.decode("utf-8", "surrogateescape") for part in raw.rstrip(b"\0").split(b"\0")]


def _state(pid: int) -> str | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except (FileNotFoundError, ProcessLookupError):
        return None
    # The command name is in parentheses and may itself hold spaces or parentheses.
    after_name = raw[raw.rfind(")") + 2 :]
    return after_name[:1] or None


def _reap_if_child(pid: int) -> None:
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def is_alive(pid: int) -> bool:
    """True while `pid` exists and has not finished (zombies count as dead)."""
    if pid <= 0:
        return False
    _reap_if_child(pid)
    state = _state(pid)
    return state is not None and state not in _FINISHED_STATES


def is_desk_serve(pid: int, data_dir: Path) -> bool:
    """True when `pid` is a live `desk serve` for `data_dir` (guards against reused pids)."""
    argv = process_cmdline(pid)
    if not argv or not is_alive(pid):
        return False
    return "serve" in argv and _option(argv, "--data-dir") == str(data_dir)


def _option(argv: list[str], name: str) -> str | None:
    for index, arg in enumerate(argv):
        if arg == name and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith(name + "="):
            return arg[len(name) + 1 :]
    return None


def desk_serve_pids(data_dir: Path, runtime_dir: Path) -> list[int]:
    """Every live managed `desk serve` for this data and runtime dir, registered or not."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        argv = process_cmdline(pid)
        if (
            argv
            and "serve" in argv
            and _option(argv, "--data-dir") == str(data_dir)
            and _option(argv, "--runtime-dir") == str(runtime_dir)
            and is_alive(pid)
        ):
            found.append(pid)
    return found


def process_environ(pid: int) -> dict[str, str]:
    """The environment `pid` started with ({} when it cannot be read)."""
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    pairs = (item.decode("utf-8", "surrogateescape").partition("=") for item in raw.split(b"\0"))
    return {name: value for name, sep, value in pairs if sep}


def _is_serve_argv(argv: list[str]) -> bool:
    """`desk serve ...` or `python -m desktop serve ...` (not a test runner that mentions it)."""
    for index, arg in enumerate(argv[:4]):
        name = os.path.basename(arg)
        runs_desk = name == "desk" or (arg == "desktop" and index > 0 and argv[index - 1] == "-m")
        if runs_desk:
            return index + 1 < len(argv) and "serve" in argv[index + 1 :]
    return False


def _effective_dir(pid: int, given: str) -> str | None:
    """`given` as that process sees it: relative to its cwd, symlinks resolved."""
    path = Path(given).expanduser()
    if not path.is_absolute():
        try:
            path = Path(os.readlink(f"/proc/{pid}/cwd")) / path
        except OSError:
            return None
    return os.path.realpath(path)


def serve_pids_for(data_dir: Path, runtime_dir: Path) -> list[int]:
    """Every live `desk serve` using these dirs, however it was started: the managed ones
    (dirs in argv) and ones started by hand (dirs from --data-dir, DESK_DATA_DIR or the
    defaults of that process's own environment)."""
    wanted = (os.path.realpath(data_dir), os.path.realpath(runtime_dir))
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        pid = int(entry.name)
        argv = process_cmdline(pid)
        if not argv or not _is_serve_argv(argv):
            continue
        env = process_environ(pid)
        data = _option(argv, "--data-dir") or env.get("DESK_DATA_DIR") or str(default_data_dir(env))
        runtime = (
            _option(argv, "--runtime-dir")
            or env.get("DESK_RUNTIME_DIR")
            or str(default_runtime_dir(env))
        )
        dirs = (_effective_dir(pid, data), _effective_dir(pid, runtime))
        if dirs == wanted and is_alive(pid):
            found.append(pid)
    return found


def wait_for_exit(pid: int, timeout: float) -> bool:
    """Block until `pid` has finished or `timeout` passes; True when it is gone."""
    deadline = time.monotonic() + timeout
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    except OSError:
        pidfd = -1
    try:
        while is_alive(pid):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            if pidfd >= 0:
                # A pidfd becomes readable when the process exits: no polling loop needed.
                poller = select.poll()
                poller.register(pidfd, select.POLLIN)
                poller.poll(remaining * 1000)
            else:
                time.sleep(min(0.02, remaining))
        return True
    finally:
        if pidfd >= 0:
            os.close(pidfd)


def terminate(pid: int, timeout: float) -> bool:
    """SIGTERM, wait up to `timeout`, then SIGKILL; True when SIGKILL was needed."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    if wait_for_exit(pid, timeout):
        return False
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    if not wait_for_exit(pid, 5.0):
        raise RuntimeError(f"process {pid} survived SIGKILL")
    return True


def process_start_epoch(pid: int | None = None) -> float:
    """Wall-clock time (seconds since the epoch) at which `pid` (default: this one) started."""
    target = "self" if pid is None else str(pid)
    raw = Path(f"/proc/{target}/stat").read_text(encoding="ascii", errors="replace")
    fields = raw[raw.rfind(")") + 2 :].split()
    start_ticks = int(fields[19])  # field 22 of stat(5), in clock ticks since boot
    since_boot = start_ticks / os.sysconf("SC_CLK_TCK")
    # btime has whole-second resolution; measuring back from now through CLOCK_BOOTTIME
    # keeps the tick resolution (10 ms).
    return time.time() - (time.clock_gettime(time.CLOCK_BOOTTIME) - since_boot)
