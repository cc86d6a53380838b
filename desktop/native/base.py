"""What both PTY backends share: argument checks, executable lookup, and the read, wait,
signal and foreground logic of PtyProcessBase. The backends import this module, never the
package, so desktop.native can import them without a circle."""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Mapping, Sequence
from typing import NamedTuple, Protocol

MAX_DIMENSION = 1000


class ExitStatus(NamedTuple):
    """How a child ended: exactly one of `code` and `signal` is set (both None only when the
    status was lost because something else reaped the child)."""

    code: int | None
    signal: int | None

    @property
    def exit_code(self) -> int:
        """The exit code, or 128 + signal number as shells report it (-1 if unknown)."""
        if self.code is not None:
            return self.code
        if self.signal is not None:
            return 128 + self.signal
        return -1


class PtyProcess(Protocol):
    """A child process in a PTY, seen from the master side."""

    pid: int
    fd: int

    def read(self, max_bytes: int = 65536) -> bytes: ...
    def read_into(self, buffer: bytearray | memoryview) -> int: ...
    def write(self, data: bytes | memoryview) -> int: ...
    def resize(self, cols: int, rows: int) -> None: ...
    def foreground_pgid(self) -> int | None: ...
    def foreground_process(self) -> str | None: ...
    def signal_group(self, sig: int) -> None: ...
    def signal_foreground(self, sig: int) -> None: ...
    def poll_exit(self) -> ExitStatus | None: ...
    def close(self) -> None: ...


class SpawnRequest(NamedTuple):
    """Validated, encoded spawn arguments handed to a backend."""

    argv: list[bytes]
    env: dict[str, str]
    envp: list[bytes]  # "KEY=value" entries for execve
    cwd: str
    candidates: list[bytes]  # executables to try in order, as execvp would
    cols: int
    rows: int


def check_size(cols: int, rows: int) -> None:
    for name, value in (("cols", cols), ("rows", rows)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int, got {type(value).__name__}")
        if not 1 <= value <= MAX_DIMENSION:
            raise ValueError(f"{name} must be within 1..{MAX_DIMENSION}, got {value}")


def _encode(value: object, what: str) -> bytes:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {type(value).__name__}")
    if "\0" in value:
        raise ValueError(f"{what} contains a NUL character")
    return os.fsencode(value)


def exec_candidates(program: str, search_path: str) -> list[str]:
    """Paths execvp would try for `program`: itself if it has a slash, else each PATH entry
    (an empty entry means the working directory). Relative ones resolve against the child's cwd."""
    if "/" in program:
        return [program]
    return [os.path.join(entry or ".", program) for entry in search_path.split(os.pathsep)]


def make_request(
    argv: Sequence[str], env: Mapping[str, str], cwd: str, cols: int, rows: int
) -> SpawnRequest:
    """Check every argument before anything is created; raises TypeError or ValueError."""
    if isinstance(argv, str | bytes) or not isinstance(argv, Sequence):
        raise TypeError("argv must be a sequence of str")
    if not argv:
        raise ValueError("argv must not be empty")
    if not argv[0]:
        raise ValueError("argv[0] must not be empty")
    encoded_argv = [_encode(arg, "argument") for arg in argv]
    if not isinstance(env, Mapping):
        raise TypeError("env must be a mapping of str to str")
    envp: list[bytes] = []
    for key, value in env.items():
        encoded_key = _encode(key, "environment variable name")
        if not key or "=" in key:
            raise ValueError(f"invalid environment variable name {key!r}")
        envp.append(encoded_key + b"=" + _encode(value, f"environment variable {key}"))
    _encode(cwd, "cwd")
    if not cwd:
        raise ValueError("cwd must not be empty")
    check_size(cols, rows)
    search_path = env.get("PATH", os.defpath)
    return SpawnRequest(
        argv=encoded_argv,
        env=dict(env),
        envp=envp,
        cwd=cwd,
        candidates=[os.fsencode(c) for c in exec_candidates(argv[0], search_path)],
        cols=cols,
        rows=rows,
    )


def spawn_error(err: int, filename: str | None = None) -> OSError:
    """OSError(errno, ...) picks the subclass: FileNotFoundError, NotADirectoryError, ..."""
    if filename is None:
        return OSError(err, os.strerror(err))
    return OSError(err, os.strerror(err), filename)


class PtyProcessBase:
    """What both backends share: reading to bytes, waiting, signalling, foreground lookup."""

    pid: int
    fd: int

    def __init__(self, pid: int, fd: int) -> None:
        self.pid = pid
        self.fd = fd
        self._status: ExitStatus | None = None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} pid={self.pid} fd={self.fd} status={self._status}>"

    def read(self, max_bytes: int = 65536) -> bytes:
        """Up to max_bytes of output; b"" if none yet; EOFError once the slave side is gone."""
        if max_bytes < 1:
            raise ValueError("max_bytes must be positive")
        try:
            data = os.read(self.fd, max_bytes)
        except BlockingIOError:
            return b""
        except OSError as error:
            if error.errno == errno.EIO:
                raise EOFError("PTY slave side closed") from None
            raise
        if not data:
            raise EOFError("PTY slave side closed")
        return data

    def read_into(self, buffer: bytearray | memoryview) -> int:
        raise NotImplementedError

    def write(self, data: bytes | memoryview) -> int:
        raise NotImplementedError

    def resize(self, cols: int, rows: int) -> None:
        raise NotImplementedError

    def foreground_pgid(self) -> int | None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def foreground_process(self) -> str | None:
        pgid = self.foreground_pgid()
        if pgid is None:
            return None
        # The group leader's pid is the pgid; when the leader is gone the name is unknown.
        try:
            with open(f"/proc/{pgid}/comm", encoding="utf-8", errors="replace") as comm:
                return comm.read().rstrip("\n") or None
        except OSError:
            return None

    def signal_group(self, sig: int) -> None:
        # Once reaped, the pid may belong to someone else: never signal it again.
        if self._status is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, sig)

    def signal_foreground(self, sig: int) -> None:
        pgid = self.foreground_pgid()
        if pgid is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, sig)

    def poll_exit(self) -> ExitStatus | None:
        if self._status is not None:
            return self._status
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            # Someone else reaped it (e.g. SIGCHLD set to SIG_IGN): gone, status unknown.
            self._status = ExitStatus(code=None, signal=None)
            return self._status
        if pid == 0:
            return None
        if os.WIFSIGNALED(status):
            self._status = ExitStatus(code=None, signal=os.WTERMSIG(status))
        else:
            self._status = ExitStatus(code=os.waitstatus_to_exitcode(status), signal=None)
        return self._status
