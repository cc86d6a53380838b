"""PTY backend over the cffi extension desktop.native._pty (fork/exec happen in C)."""

from __future__ import annotations

import errno
import os

from desktop.native._pty import ffi, lib
from desktop.native.base import PtyProcessBase, SpawnRequest, check_size, spawn_error


class NativePtyProcess(PtyProcessBase):
    """Master side of a PTY whose child was started by desk_pty_spawn."""

    def read_into(self, buffer: bytearray | memoryview) -> int:
        """Fill buffer with what is available (one C call may drain several kernel reads).
        Returns 0 when nothing is available; raises EOFError once the slave side is gone."""
        target = ffi.from_buffer(buffer, require_writable=True)
        count = int(lib.desk_pty_read(self.fd, target, len(target)))
        if count >= 0:
            return count
        if count == -errno.EAGAIN:
            return 0
        if count == -errno.EIO:
            raise EOFError("PTY slave side closed")
        raise OSError(-count, os.strerror(-count))

    def write(self, data: bytes | memoryview) -> int:
        source = ffi.from_buffer(data)
        count = int(lib.desk_pty_write(self.fd, source, len(source)))
        if count < 0:
            raise OSError(-count, os.strerror(-count))
        return count

    def resize(self, cols: int, rows: int) -> None:
        check_size(cols, rows)
        err = int(lib.desk_pty_resize(self.fd, cols, rows))
        if err:
            raise OSError(err, os.strerror(err))

    def foreground_pgid(self) -> int | None:
        pgid = int(lib.desk_pty_foreground_pgid(self.fd))
        return pgid if pgid > 0 else None

    def close(self) -> None:
        if self.fd < 0:
            return
        fd, self.fd = self.fd, -1  # never touch a recycled fd number afterwards
        os.close(fd)


def _c_strings(values: list[bytes]) -> tuple[object, list[object]]:
    """A NULL-terminated char*[] plus the owners that keep its strings alive."""
    owners: list[object] = [ffi.new("char[]", value) for value in values]
    return ffi.new("char *[]", [*owners, ffi.NULL]), owners


def spawn_native(request: SpawnRequest) -> NativePtyProcess:
    paths, path_owners = _c_strings(request.candidates)
    argv, argv_owners = _c_strings(request.argv)
    envp, envp_owners = _c_strings(request.envp)
    master_fd = ffi.new("int *")
    pid = ffi.new("int *")
    stage = ffi.new("int *")
    err = int(
        lib.desk_pty_spawn(
            paths,
            argv,
            envp,
            os.fsencode(request.cwd),
            request.cols,
            request.rows,
            master_fd,
            pid,
            stage,
        )
    )
    del path_owners, argv_owners, envp_owners  # the strings had to outlive the call
    if err == 0:
        return NativePtyProcess(int(pid[0]), int(master_fd[0]))
    if stage[0] == lib.DESK_STAGE_CHDIR:
        raise spawn_error(err, request.cwd)
    if stage[0] == lib.DESK_STAGE_EXEC:
        raise spawn_error(err, os.fsdecode(request.argv[0]))
    raise spawn_error(err)
