"""A daemon's log file: stdout and stderr of the detached process, quoted when a start fails."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

ROTATE_BYTES = 5 * 1024 * 1024
TAIL_LINES = 10


def open_log(path: Path, rotate_bytes: int = ROTATE_BYTES) -> int:
    """A descriptor appending to `path` (0600); a log past `rotate_bytes` is moved to `.1` first.

    The caller passes it to the child and closes its own copy."""
    with contextlib.suppress(FileNotFoundError):
        if path.stat().st_size > rotate_bytes:
            path.replace(path.with_name(path.name + ".1"))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    os.fchmod(fd, 0o600)
    return fd


def log_size(fd: int) -> int:
    """Where the next line goes: a tail from here shows only what the new process wrote."""
    return os.fstat(fd).st_size


def log_tail(path: Path, offset: int = 0, lines: int = TAIL_LINES) -> str:
    """The last `lines` lines written to `path` after `offset`; "" when there is no log."""
    try:
        with path.open("rb") as handle:
            handle.seek(offset)
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(text.strip().splitlines()[-lines:])
