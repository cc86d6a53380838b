"""How the service finds the PTY host: a registration file (0600) in the runtime directory.

Only one PTY host runs per runtime directory: it holds an exclusive lock on a lock file for
its whole life, and writes the registration only once its socket is listening.
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass
from pathlib import Path

from desktop.config import Settings, ensure_private_dir, read_json_file, write_private_file
from desktop.ptyhost.protocol import PROTOCOL_VERSION

SOCKET_DIR_NAME = "pty-host"
SOCKET_NAME = "host.sock"
LOCK_NAME = "pty-host.lock"
LOG_NAME = "pty-host.log"
MAX_SOCKET_PATH = 107


@dataclass(frozen=True)
class Registration:
    pid: int
    protocol: int
    socket: str
    secret: str
    epoch: str

    def to_json(self) -> dict[str, object]:
        return {
            "pid": self.pid,
            "protocol": self.protocol,
            "socket": self.socket,
            "secret": self.secret,
            "epoch": self.epoch,
        }


def socket_path(settings: Settings) -> Path:
    path = ensure_private_dir(settings.runtime_dir / SOCKET_DIR_NAME) / SOCKET_NAME
    if len(os.fsencode(str(path))) > MAX_SOCKET_PATH:
        raise ValueError(
            f"the runtime directory {settings.runtime_dir} is too long for a Unix socket path; "
            "set DESK_RUNTIME_DIR to a shorter directory"
        )
    return path


def log_path(settings: Settings) -> Path:
    return settings.runtime_dir / LOG_NAME


def write_registration(settings: Settings, registration: Registration) -> None:
    import json

    write_private_file(settings.pty_host_registration_path, json.dumps(registration.to_json()))


def read_registration(settings: Settings) -> Registration | None:
    """The registration on disk; None when missing or unreadable (corrupt counts as missing)."""
    try:
        raw = read_json_file(settings.pty_host_registration_path)
    except (OSError, ValueError):
        return None
    if raw is None:
        return None
    pid, protocol = raw.get("pid"), raw.get("protocol")
    socket, secret, epoch = raw.get("socket"), raw.get("secret"), raw.get("epoch")
    if not (
        isinstance(pid, int)
        and isinstance(protocol, int)
        and isinstance(socket, str)
        and isinstance(secret, str)
        and isinstance(epoch, str)
    ):
        return None
    return Registration(pid=pid, protocol=protocol, socket=socket, secret=secret, epoch=epoch)


def remove_registration(settings: Settings, pid: int) -> None:
    """Remove the registration if it still names `pid` (a successor may have replaced it)."""
    current = read_registration(settings)
    if current is not None and current.pid == pid:
        settings.pty_host_registration_path.unlink(missing_ok=True)


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is not alive for our purposes.
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            state = stat.read().rsplit(")", 1)[-1].split()[0]
    except (OSError, IndexError):
        return True
    return state != "Z"


def usable(registration: Registration | None) -> bool:
    return (
        registration is not None
        and registration.protocol == PROTOCOL_VERSION
        and pid_alive(registration.pid)
    )


class HostLock:
    """The exclusive lock that makes a PTY host the only one for its runtime directory."""

    def __init__(self, settings: Settings) -> None:
        self.path = settings.runtime_dir / LOCK_NAME
        self._fd: int | None = None

    def acquire(self) -> bool:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
