"""Which processes are managed `desk serve` services of a data dir (argv read from /proc)."""

from __future__ import annotations

import os
from pathlib import Path

from desktop.config import default_data_dir, default_runtime_dir
from desktop.process.liveness import is_alive, process_cmdline


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
