"""Where the PTY host's files are (sockets, registration, lock, log, settings), and whether the
registered host is one we can use.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from desktop.config import Settings, ensure_private_dir, read_json_file, write_private_file
from desktop.process.liveness import is_alive
from desktop.process.registration import CorruptRegistration, HostRegistration, read_registration
from desktop.ptyhost.protocol import PROTOCOL_VERSION

SOCKET_DIR_NAME = "pty-host"
SOCKET_NAME = "host.sock"
HANDOFF_SOCKET_NAME = "handoff.sock"
LOCK_NAME = "pty-host.lock"
LOG_NAME = "pty-host.log"
SETTINGS_NAME = "pty-host-settings.json"
MAX_SOCKET_PATH = 107


def socket_path(settings: Settings) -> Path:
    path = ensure_private_dir(settings.runtime_dir / SOCKET_DIR_NAME) / SOCKET_NAME
    if len(os.fsencode(str(path))) > MAX_SOCKET_PATH:
        raise ValueError(
            f"the runtime directory {settings.runtime_dir} is too long for a Unix socket path; "
            "set DESK_RUNTIME_DIR to a shorter directory"
        )
    return path


def handoff_path(registration: HostRegistration) -> Path:
    """The handoff socket, next to the control socket the registration names."""
    return Path(registration.socket).with_name(HANDOFF_SOCKET_NAME)


def log_path(settings: Settings) -> Path:
    return settings.runtime_dir / LOG_NAME


def lock_path(settings: Settings) -> Path:
    return settings.runtime_dir / LOCK_NAME


def settings_path(settings: Settings) -> Path:
    return settings.runtime_dir / SETTINGS_NAME


def write_host_settings(settings: Settings, event_loop: str | None) -> None:
    """What the host to be started needs besides its directories (blocking)."""
    values = {
        "pty_ring_bytes": settings.pty_ring_bytes,
        "pty_host_idle_exit_seconds": settings.pty_host_idle_exit_seconds,
        "pty_autosave_seconds": settings.pty_autosave_seconds,
        "event_loop": event_loop,
    }
    write_private_file(settings_path(settings), json.dumps(values) + "\n")


def read_host_settings(settings: Settings) -> tuple[Settings, str | None]:
    """`settings` with what the service wrote for this host, and its event loop choice;
    unchanged when there is no such file (a host started by hand)."""
    try:
        values = read_json_file(settings_path(settings)) or {}
    except ValueError:
        values = {}
    ring = values.get("pty_ring_bytes")
    idle = values.get("pty_host_idle_exit_seconds")
    autosave = values.get("pty_autosave_seconds")
    loop = values.get("event_loop")
    if isinstance(ring, int) and not isinstance(ring, bool) and ring > 0:
        settings = dataclasses.replace(settings, pty_ring_bytes=ring)
    if isinstance(idle, int | float) and not isinstance(idle, bool):
        settings = dataclasses.replace(settings, pty_host_idle_exit_seconds=float(idle))
    if isinstance(autosave, int | float) and not isinstance(autosave, bool) and autosave > 0:
        settings = dataclasses.replace(settings, pty_autosave_seconds=float(autosave))
    return settings, loop if isinstance(loop, str) else None


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
