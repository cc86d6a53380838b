"""Where the PTY host's files are, and whether the registered host is one we can use.

Runtime directory: `pty-host/host.sock` (in a 0700 directory), `pty-host.json` (the
registration, 0600), `pty-host.lock` (held by the one running host) and `pty-host.log`
(its stdout and stderr). Only one PTY host runs per runtime directory: it holds the lock for
its whole life, and writes the registration only once its socket is listening.
"""

from __future__ import annotations

import os
from pathlib import Path

from desktop.config import Settings, ensure_private_dir
from desktop.process.liveness import is_alive
from desktop.process.registration import CorruptRegistration, HostRegistration, read_registration
from desktop.ptyhost.protocol import PROTOCOL_VERSION

SOCKET_DIR_NAME = "pty-host"
SOCKET_NAME = "host.sock"
LOCK_NAME = "pty-host.lock"
LOG_NAME = "pty-host.log"
MAX_SOCKET_PATH = 107


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


def lock_path(settings: Settings) -> Path:
    return settings.runtime_dir / LOCK_NAME


def read_host_registration(settings: Settings) -> HostRegistration | None:
    """The registration on disk; None when missing or unreadable (corrupt counts as missing)."""
    try:
        return read_registration(settings.pty_host_registration_path, HostRegistration)
    except CorruptRegistration:
        return None


def usable(registration: HostRegistration | None) -> bool:
    """A live host that speaks our protocol."""
    return (
        registration is not None
        and registration.protocol == PROTOCOL_VERSION
        and is_alive(registration.pid)
    )
