"""Registration files: how a client finds a running daemon (pid, where, which secret), written
atomically (0600) and removed only while they still name their writer."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TypeVar

from desktop.config import read_json_file, write_private_file
from desktop.values import strict_int


class CorruptRegistration(ValueError):
    """The registration file exists but does not describe a daemon."""


def _field(raw: dict[str, object], name: str, ok: Callable[[object], bool], what: str) -> object:
    value = raw.get(name)
    if not ok(value):
        raise CorruptRegistration(f"field {name!r} is {what}")
    return value


def _pid(raw: dict[str, object]) -> int:
    pid = _field(raw, "pid", lambda v: strict_int(v) and v > 0, "not a positive integer")
    assert isinstance(pid, int)
    return pid


def _text(raw: dict[str, object], name: str, what: str = "not a string") -> str:
    value = _field(raw, name, lambda v: isinstance(v, str), what)
    assert isinstance(value, str)
    return value


@dataclass(frozen=True)
class Registration:
    """What every record names: the daemon's pid. Its file holds its fields as JSON."""

    pid: int

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class ServiceRegistration(Registration):
    """The managed service (`desk serve`): runtime_dir/service.json."""

    url: str
    token: str = field(repr=False)
    started: float

    @classmethod
    def from_dict(cls, raw: dict[str, object]) -> ServiceRegistration:
        """`raw` checked field by field; CorruptRegistration names the first bad field."""
        pid = _pid(raw)
        url = raw.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise CorruptRegistration("field 'url' is not an http URL")
        token = raw.get("token")
        if not isinstance(token, str) or not token:
            raise CorruptRegistration("field 'token' is missing or empty")
        started = raw.get("started")
        if not isinstance(started, int | float) or isinstance(started, bool):
            raise CorruptRegistration("field 'started' is not a timestamp")
        return cls(pid=pid, url=url, token=token, started=float(started))


@dataclass(frozen=True)
class HostRegistration(Registration):
    """The PTY host (`desk pty-host`): runtime_dir/pty-host.json."""

    protocol: int
    socket: str
    secret: str = field(repr=False)
    epoch: str

    @classmethod
    def from_dict(cls, raw: dict[str, object]) -> HostRegistration:
        protocol = _field(raw, "protocol", strict_int, "not an integer")
        assert isinstance(protocol, int)
        return cls(
            pid=_pid(raw),
            protocol=protocol,
            socket=_text(raw, "socket"),
            secret=_text(raw, "secret"),
            epoch=_text(raw, "epoch"),
        )


R = TypeVar("R", ServiceRegistration, HostRegistration)


def read_registration(path: Path, kind: type[R]) -> R | None:
    """The record at `path`; None when there is none; CorruptRegistration when unreadable."""
    try:
        raw = read_json_file(path)
    except (OSError, ValueError) as exc:
        raise CorruptRegistration(str(exc) or type(exc).__name__) from None
    return None if raw is None else kind.from_dict(raw)


def write_registration(path: Path, registration: Registration) -> None:
    write_private_file(path, json.dumps(registration.to_dict(), sort_keys=True) + "\n")


def remove_registration(path: Path, kind: type[R], *, pid: int) -> None:
    """Remove the record at `path` while it still names `pid` (a successor may own it now)."""
    try:
        current = read_registration(path, kind)
    except CorruptRegistration:
        return
    if current is not None and current.pid == pid:
        path.unlink(missing_ok=True)
