"""The managed service's registration file: who runs, where, with which token."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from desktop.config import read_json_file, write_private_file


class CorruptRegistration(ValueError):
    """The registration file exists but does not describe a service."""


@dataclass(frozen=True)
class ServiceRegistration:
    pid: int
    url: str
    token: str = field(repr=False)
    started: float

    def to_dict(self) -> dict[str, object]:
        return {"pid": self.pid, "url": self.url, "token": self.token, "started": self.started}


def parse_registration(value: dict[str, object]) -> ServiceRegistration:
    """`value` checked field by field; CorruptRegistration names the first bad field."""
    pid, url, token, started = (value.get(name) for name in ("pid", "url", "token", "started"))
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        raise CorruptRegistration("field 'pid' is not a positive integer")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise CorruptRegistration("field 'url' is not an http URL")
    if not isinstance(token, str) or not token:
        raise CorruptRegistration("field 'token' is missing or empty")
    if not isinstance(started, int | float) or isinstance(started, bool):
        raise CorruptRegistration("field 'started' is not a timestamp")
    return ServiceRegistration(pid=pid, url=url, token=token, started=float(started))


def load_registration(path: Path) -> tuple[ServiceRegistration | None, bool]:
    """(registration or None, whether a corrupt file was removed).

    A corrupt file is removed with a warning on stderr, so the next start can replace it.
    """
    try:
        raw = read_json_file(path)
        if raw is None:
            return None, False
        return parse_registration(raw), False
    except (ValueError, OSError) as exc:
        reason = str(exc) or type(exc).__name__
        print(
            f"desk: warning: corrupt service registration {path} removed ({reason})",
            file=sys.stderr,
        )
        path.unlink(missing_ok=True)
        return None, True


def save_registration(path: Path, registration: ServiceRegistration) -> None:
    write_private_file(path, json.dumps(registration.to_dict(), sort_keys=True) + "\n")


def remove_registration(path: Path) -> None:
    path.unlink(missing_ok=True)
