"""Which processes are managed `desk serve` services of a data dir (argv read from /proc)."""

from __future__ import annotations

from pathlib import Path

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
