"""PTY backend over ptyprocess, for when the native extension is not built, adapted to the
native module's contract.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import signal
import stat
import threading
from typing import Any

import ptyprocess

from desktop.native.base import PtyProcessBase, SpawnRequest, check_size, spawn_error


class _TrackedPtyProcess(ptyprocess.PtyProcess):  # type: ignore[misc]
    """Remembers the instances ptyprocess creates in this thread: when exec fails it raises
    after forking without closing the master or reaping the child, and this is our handle."""

    _local = threading.local()

    def __init__(self, pid: int, fd: int) -> None:
        super().__init__(pid, fd)
        created: list[_TrackedPtyProcess] | None = getattr(self._local, "created", None)
        if created is not None:
            created.append(self)


class FallbackPtyProcess(PtyProcessBase):
    """Master side of a PTY whose child was started by ptyprocess."""

    def __init__(self, process: Any) -> None:
        super().__init__(int(process.pid), int(process.fd))
        self._process = process  # owns the file object that owns the fd
        # Disarm ptyprocess's close()/__del__, which would signal and wait for the child.
        process.closed = True
        os.set_blocking(self.fd, False)
        os.set_inheritable(self.fd, False)

    def read_into(self, buffer: bytearray | memoryview) -> int:
        try:
            count = os.readv(self.fd, [buffer])
        except BlockingIOError:
            return 0
        except OSError as error:
            if error.errno == errno.EIO:
                raise EOFError("PTY slave side closed") from None
            raise
        if count == 0 and len(buffer) > 0:
            raise EOFError("PTY slave side closed")
        return count

    def write(self, data: bytes | memoryview) -> int:
        try:
            return os.write(self.fd, data)
        except BlockingIOError:
            return 0

    def resize(self, cols: int, rows: int) -> None:
        check_size(cols, rows)
        self._process.setwinsize(rows, cols)

    def foreground_pgid(self) -> int | None:
        try:
            pgid = os.tcgetpgrp(self.fd)
        except OSError:
            return None
        return pgid if pgid > 0 else None

    def close(self) -> None:
        if self.fd < 0:
            return
        self.fd = -1  # never touch a recycled fd number afterwards
        self._process.fileobj.close()


def _check_cwd(cwd: str) -> None:
    """ptyprocess would chdir in the forked Python child; fail early here instead."""
    mode = os.stat(cwd).st_mode  # FileNotFoundError / PermissionError
    if not stat.S_ISDIR(mode):
        raise spawn_error(errno.ENOTDIR, cwd)
    if not os.access(cwd, os.X_OK):
        raise spawn_error(errno.EACCES, cwd)


def _resolve_program(request: SpawnRequest) -> str:
    """First executable candidate (relative ones taken from cwd, as in the child)."""
    denied = False
    for candidate in request.candidates:
        path = os.path.join(request.cwd, os.fsdecode(candidate))
        if os.path.isfile(path):
            if os.access(path, os.X_OK):
                return path
            denied = True
        elif os.path.isdir(path):
            denied = True  # execve on a directory fails with EACCES
    program = os.fsdecode(request.argv[0])
    raise spawn_error(errno.EACCES if denied else errno.ENOENT, program)


def _child_setup(cwd: str) -> None:
    """Runs in the forked child before exec: the cwd, and no ignored or blocked signals
    inherited from this process (Python ignores SIGPIPE, for one)."""
    os.chdir(cwd)
    for sig in signal.valid_signals():
        if sig not in (signal.SIGKILL, signal.SIGSTOP):
            with contextlib.suppress(OSError, ValueError):
                signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, set())


def _discard(process: Any) -> None:
    """Close a half-spawned child's master and reap it (it exits right after failing)."""
    process.closed = True
    process.fileobj.close()
    with contextlib.suppress(ChildProcessError):
        os.waitpid(process.pid, 0)


def spawn_fallback(request: SpawnRequest) -> FallbackPtyProcess:
    _check_cwd(request.cwd)
    program = _resolve_program(request)
    argv = [program, *(os.fsdecode(arg) for arg in request.argv[1:])]
    created: list[_TrackedPtyProcess] = []
    _TrackedPtyProcess._local.created = created
    parent_pid = os.getpid()
    try:
        process = _TrackedPtyProcess.spawn(
            argv,
            env=request.env,
            dimensions=(request.rows, request.cols),
            preexec_fn=functools.partial(_child_setup, request.cwd),
        )
    except BaseException as error:
        if os.getpid() != parent_pid:
            os._exit(127)  # ptyprocess let an error escape in the forked child: stop it here
        for half_spawned in created:
            _discard(half_spawned)
        if isinstance(error, OSError) and error.errno is not None:
            raise spawn_error(error.errno, os.fsdecode(request.argv[0])) from None
        raise  # e.g. raised by _child_setup in the child: the class is already the right one
    finally:
        _TrackedPtyProcess._local.created = None
    return FallbackPtyProcess(process)
