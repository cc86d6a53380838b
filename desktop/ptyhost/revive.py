"""Saving terminals when the app quits and bringing them back on the next start: the policy
(what comes back as what) and the file format.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from desktop.config import ensure_private_dir, write_private_file
from desktop.ptyhost.protocol import PtyHostError
from desktop.ptyhost.shells import is_shell
from desktop.ptyhost.spec import TerminalSpec, parse_create
from desktop.ptyhost.terminal import HostContext, Terminal
from desktop.ptyhost.validation import is_dimension
from desktop.values import strict_int

log = logging.getLogger("desk.ptyhost")

FORMAT_VERSION = 1


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
        if not (is_dimension(cols) and is_dimension(rows)):
            raise ValueError("bad size")
        try:
            checkpoint = base64.b64decode(str(_typed(raw, "checkpoint", str)), validate=True)
        except binascii.Error as exc:
            raise ValueError(f"bad checkpoint: {exc}") from None
        exit_code = raw.get("exit_code")
        if exit_code is not None and not strict_int(exit_code):
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
    if not isinstance(value, kind) or (kind is int and not strict_int(value)):
        raise ValueError(f"{name} missing or not a {kind.__name__}")
    return value


def _optional_str(raw: dict[str, object], name: str) -> str | None:
    value = raw.get(name)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{name} must be a string")
    return value


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


# ----- policy ---------------------------------------------------------------------------


class Host(Protocol):
    """What reviving needs of the daemon (desktop.ptyhost.host.PtyHost)."""

    @property
    def context(self) -> HostContext: ...
    @property
    def terminals(self) -> dict[str, Terminal]: ...
    def spawn_terminal(
        self, terminal_id: str, spec: TerminalSpec, *, created: int | None = None
    ) -> Terminal: ...


# The marker above a shell recovered from an autosave (restored_prefix fills in {stamp}).
RECOVERED_MARKER = "recovered after a crash {stamp}: its programs had ended"


def autosave_dir(saved_terminals_dir: Path) -> Path:
    """Where the running host keeps its crash insurance (desktop.ptyhost.autosave)."""
    return saved_terminals_dir / "autosave"


def load_crashed(saved_terminals_dir: Path, superseded: set[str]) -> list[SavedTerminal]:
    """The last autosave of each terminal of a host that crashed, except those a quit-time
    save supersedes (blocking: run it in a thread). The files stay until the next autosave
    replaces them, so a host that crashes again while reviving loses nothing."""
    return [
        saved for saved in load_all(autosave_dir(saved_terminals_dir)) if saved.id not in superseded
    ]


def saved_record(terminal: Terminal, cwd: str, checkpoint: bytes) -> SavedTerminal:
    """What is saved of `terminal`, at quit and by the autosave alike."""
    return SavedTerminal(
        id=terminal.id,
        command=terminal.command,
        args=list(terminal.args),
        cwd=cwd,
        title=terminal.user_title,
        osc_title=terminal.osc_title,
        group=terminal.group,
        cols=terminal.cols,
        rows=terminal.rows,
        created=terminal.created,
        exit_code=terminal.exit_code,
        was_running=terminal.running,
        checkpoint=checkpoint,
    )


async def save_terminals(terminals: list[Terminal], directory: Path) -> int:
    """Save every terminal whose screen can be captured; returns how many were saved."""
    records: list[SavedTerminal] = []
    for terminal in terminals:
        if not terminal.revivable:
            continue
        try:
            checkpoint = await terminal.final_screen()
        except Exception:
            log.exception("terminal %s: cannot capture its screen; not saved", terminal.id)
            continue
        cwd = (
            await asyncio.to_thread(process_cwd, terminal.pid, terminal.cwd)
            if terminal.running
            else terminal.cwd
        )
        records.append(saved_record(terminal, cwd, checkpoint))
    await asyncio.to_thread(save_all, directory, records)
    log.info("saved %d terminal(s)", len(records))
    return len(records)


async def revive_terminals(host: Host, directory: Path) -> None:
    """Bring back every saved terminal into `host`, each file read once and then forgotten;
    then the autosaves a crashed host left behind (a clean exit removes them), marked as
    recovered."""
    saved_terminals = await asyncio.to_thread(load_all, directory)
    crashed = await asyncio.to_thread(
        load_crashed, directory, {saved.id for saved in saved_terminals}
    )
    for saved in crashed:
        try:
            revive(host, saved, "recovered", RECOVERED_MARKER)
        except Exception:
            log.exception("could not recover terminal %s", saved.id)
    for saved in saved_terminals:
        try:
            revive(host, saved)
        except Exception:
            log.exception("could not revive terminal %s", saved.id)
        await asyncio.to_thread(forget, directory, saved.id)


def revive(
    host: Host, saved: SavedTerminal, how: str = "restored", note: str = "restored {stamp}"
) -> None:
    """A running shell comes back as a new shell below its old screen; anything else as an
    exited terminal showing its last screen. `how` ends up in the terminal's info."""
    if saved.id in host.terminals:
        return
    if saved.is_shell and saved.was_running:
        try:
            spec = parse_create(
                {
                    "command": saved.command,
                    "args": saved.args,
                    "cwd": saved.cwd if os.path.isdir(saved.cwd) else None,
                    "title": saved.title,
                    "group": saved.group,
                    "size": {"cols": saved.cols, "rows": saved.rows},
                }
            )
        except PtyHostError as exc:
            log.warning("terminal %s cannot be revived as a shell: %s", saved.id, exc.message)
        else:
            terminal = host.spawn_terminal(saved.id, spec, created=saved.created)
            terminal.osc_title = saved.osc_title
            terminal.revived = how
            # Synchronous: the old screen lands in the ring before any new output is read.
            terminal.accept_output(restored_prefix(saved, note))
            return
    spec = TerminalSpec(
        command=saved.command,
        args=saved.args,
        cwd=saved.cwd,
        env={},
        cols=saved.cols,
        rows=saved.rows,
        title=saved.title,
        group=saved.group,
    )
    terminal = Terminal(host.context, saved.id, spec, None, created=saved.created)
    terminal.osc_title = saved.osc_title
    terminal.exit_code = saved.exit_code
    terminal.revived = how
    terminal.accept_output(saved.checkpoint)
    terminal.final_offset = terminal.ring.tail
    host.terminals[saved.id] = terminal
