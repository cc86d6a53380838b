"""Saving terminals when the app quits and bringing them back on the next start.

Each terminal is one JSON file (0600, written atomically) in the data dir's `terminals/`
directory (0700). A shell comes back as a new shell in the same cwd with the old screen shown
above a "restored" marker; any other program comes back as an exited terminal showing its
last screen. A file that cannot be read is skipped with a warning (and set aside as
`.corrupt`), never fatal.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

from desktop.config import ensure_private_dir, write_private_file

log = logging.getLogger("desk.ptyhost")

FORMAT_VERSION = 1
SHELLS = frozenset(
    {
        "bash",
        "sh",
        "zsh",
        "fish",
        "dash",
        "ksh",
        "mksh",
        "tcsh",
        "csh",
        "ash",
        "nu",
        "xonsh",
        "elvish",
    }
)


@dataclass
class SavedTerminal:
    id: str
    command: str
    args: list[str]
    cwd: str
    title: str | None  # the user's title, if one was set
    osc_title: str | None
    group: str | None
    cols: int
    rows: int
    created: int
    exit_code: int | None
    was_running: bool
    checkpoint: bytes

    @property
    def is_shell(self) -> bool:
        return is_shell(self.command)

    def to_json(self) -> dict[str, object]:
        return {
            "version": FORMAT_VERSION,
            "id": self.id,
            "command": self.command,
            "args": self.args,
            "cwd": self.cwd,
            "title": self.title,
            "osc_title": self.osc_title,
            "group": self.group,
            "size": {"cols": self.cols, "rows": self.rows},
            "created": self.created,
            "exit_code": self.exit_code,
            "was_running": self.was_running,
            "checkpoint": base64.b64encode(self.checkpoint).decode("ascii"),
            "saved": int(time.time() * 1000),
        }

    @classmethod
    def from_json(cls, raw: object) -> SavedTerminal:
        """Raises ValueError when anything is missing or of the wrong type."""
        if not isinstance(raw, dict) or raw.get("version") != FORMAT_VERSION:
            raise ValueError("not a saved terminal of a known version")
        size = raw.get("size")
        if not isinstance(size, dict):
            raise ValueError("size missing")
        cols, rows = size.get("cols"), size.get("rows")
        args = raw.get("args")
        fields = {
            "id": _typed(raw, "id", str),
            "command": _typed(raw, "command", str),
            "cwd": _typed(raw, "cwd", str),
            "created": _typed(raw, "created", int),
            "was_running": _typed(raw, "was_running", bool),
        }
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ValueError("args must be a list of strings")
        for value in (cols, rows):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1000:
                raise ValueError("bad size")
        assert isinstance(cols, int) and isinstance(rows, int)
        try:
            checkpoint = base64.b64decode(str(_typed(raw, "checkpoint", str)), validate=True)
        except binascii.Error as exc:
            raise ValueError(f"bad checkpoint: {exc}") from None
        exit_code = raw.get("exit_code")
        if exit_code is not None and (
            isinstance(exit_code, bool) or not isinstance(exit_code, int)
        ):
            raise ValueError("bad exit_code")
        terminal_id = fields["id"]
        assert isinstance(terminal_id, str)
        if not terminal_id or "/" in terminal_id or len(terminal_id) > 64:
            raise ValueError("bad id")
        return cls(
            id=terminal_id,
            command=str(fields["command"]),
            args=list(args),
            cwd=str(fields["cwd"]),
            title=_optional_str(raw, "title"),
            osc_title=_optional_str(raw, "osc_title"),
            group=_optional_str(raw, "group"),
            cols=cols,
            rows=rows,
            created=int(fields["created"]),  # type: ignore[call-overload]
            exit_code=exit_code,
            was_running=bool(fields["was_running"]),
            checkpoint=checkpoint,
        )


def _typed(raw: dict[str, object], name: str, kind: type) -> object:
    value = raw.get(name)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"{name} missing or not a {kind.__name__}")
    return value


def _optional_str(raw: dict[str, object], name: str) -> str | None:
    value = raw.get(name)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{name} must be a string")
    return value


def is_shell(command: str) -> bool:
    name = os.path.basename(command).lstrip("-")
    return name in SHELLS or command == os.environ.get("SHELL")


def process_cwd(pid: int | None, fallback: str) -> str:
    if pid is None:
        return fallback
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return fallback


def save_all(directory: Path, terminals: list[SavedTerminal]) -> None:
    """Write every terminal (blocking: run it in a thread)."""
    ensure_private_dir(directory)
    for saved in terminals:
        write_private_file(directory / f"{saved.id}.json", json.dumps(saved.to_json()))


def load_all(directory: Path) -> list[SavedTerminal]:
    """Every readable saved terminal, oldest first (blocking: run it in a thread)."""
    if not directory.is_dir():
        return []
    loaded: list[SavedTerminal] = []
    for path in sorted(directory.glob("*.json")):
        try:
            loaded.append(SavedTerminal.from_json(json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            log.warning("skipping saved terminal %s: %s", path.name, exc)
            with contextlib.suppress(OSError):
                path.replace(path.with_suffix(".corrupt"))
    loaded.sort(key=lambda saved: saved.created)
    return loaded


def forget(directory: Path, terminal_id: str) -> None:
    (directory / f"{terminal_id}.json").unlink(missing_ok=True)


def restored_prefix(saved: SavedTerminal, note: str = "restored {stamp}") -> bytes:
    """What a revived shell shows before its new output: the old screen, then a marker
    (`note`, with {stamp} the time of the revival)."""
    stamp = time.strftime("%Y-%m-%d %H:%M")
    marker = f"\x1b[0m\x1b[2m--- {note.format(stamp=stamp)} ---\x1b[0m"
    # Leave the alternate screen the old program may have used, show the cursor, new line.
    # ?1049l restores the saved cursor even on the main screen (xterm, xterm.js): outside the
    # alternate screen that is the checkpoint's RIS home, and the marker and the new prompt
    # would be written over the old rows. ESC 7 first saves the current cursor; each screen
    # keeps its own saved cursor, so inside the alternate screen ?1049l still returns to the
    # main screen's cursor that the checkpoint saved with ?1049h.
    leave = b"\x1b7\x1b[?1049l\x1b[0m\x1b[?25h\r\n"
    return saved.checkpoint + leave + marker.encode() + b"\r\n"
