"""FileLock: the exclusive flock that makes a process the only one of its kind."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

POLL_SECONDS = 0.05


class FileLock:
    """An exclusive flock on `path` (created 0600), held until released or the holder dies.

    The kernel drops the lock with the descriptor, so a crashed holder never leaves it stuck."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        """Take the lock if it is free; False at once when another process holds it."""
        if self._fd is not None:
            return True
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def acquire(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for the lock (blocking); False when it stayed taken."""
        deadline = time.monotonic() + timeout
        while not self.try_acquire():
            if time.monotonic() > deadline:
                return False
            time.sleep(POLL_SECONDS)
        return True

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the lock
            self._fd = None
