"""Crash insurance: the PTY host keeps a recent save of every terminal in
`terminals/autosave/`, so a host that dies loses its programs but not its tabs (how, off the
hot path: docs/pty-host.md, "Crash insurance")."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from desktop.config import ensure_private_dir, write_private_file
from desktop.ptyhost import revive
from desktop.ptyhost.terminal import Terminal

log = logging.getLogger("desk.ptyhost")

TICK_SECONDS = 2.0


@dataclass(frozen=True)
class _State:
    """What a terminal's last save showed; a change in `identity` is saved at the next tick."""

    identity: tuple[object, ...]
    output_tail: int
    at: float


def _cwds(terminals: list[Terminal]) -> dict[str, str]:
    return {t.id: revive.process_cwd(t.pid, t.cwd) if t.running else t.cwd for t in terminals}


def _write(directory: Path, records: list[revive.SavedTerminal], gone: set[str]) -> None:
    ensure_private_dir(directory)
    for record in records:
        write_private_file(directory / f"{record.id}.json", json.dumps(record.to_json()))
    for terminal_id in gone:
        revive.forget(directory, terminal_id)


def _prune(directory: Path, keep: set[str]) -> None:
    if not directory.is_dir():
        return
    for path in directory.glob("*.json"):
        if path.stem not in keep:
            path.unlink(missing_ok=True)


def _clear(directory: Path) -> None:
    _prune(directory, set())


class Autosaver:
    """Owned by the PTY host: start() after reviving, stop() then clear() on a clean exit."""

    def __init__(
        self,
        saved_terminals_dir: Path,
        terminals: Callable[[], Iterable[Terminal]],
        interval: float,
    ) -> None:
        self.directory = revive.autosave_dir(saved_terminals_dir)
        self.terminals = terminals
        self.interval = interval
        self.tick = min(TICK_SECONDS, interval)
        self.saves = 0  # files written so far (for tests and logs)
        self._state: dict[str, _State] = {}
        self._forgotten: set[str] = set()
        self._wake = asyncio.Event()
        self._closing = False
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())

    def forget(self, terminal_id: str) -> None:
        """A closed terminal: remove its file, so a crash does not bring it back."""
        self._state.pop(terminal_id, None)
        self._forgotten.add(terminal_id)
        self._wake.set()

    async def stop(self) -> None:
        """Finish the pass under way (a write is never cut in half), then end."""
        self._closing = True
        self._wake.set()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def clear(self) -> None:
        """A clean exit: nothing is left to recover."""
        await asyncio.to_thread(_clear, self.directory)

    async def _run(self) -> None:
        first = True
        while not self._closing:
            try:
                await self._pass(prune=first)
                first = False
            except Exception:
                log.exception("autosave pass failed; trying again at the next tick")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.tick)
            self._wake.clear()

    async def _pass(self, *, prune: bool) -> None:
        terminals = [t for t in self.terminals() if not t.deleted]
        cwds = await asyncio.to_thread(_cwds, terminals)
        now = time.monotonic()
        due: list[tuple[Terminal, _State]] = []
        for terminal in terminals:
            state = _State(
                identity=(
                    terminal.user_title,
                    terminal.osc_title,
                    cwds[terminal.id],
                    terminal.cols,
                    terminal.rows,
                    terminal.running,
                    terminal.exit_code,
                ),
                output_tail=terminal.ring.tail,
                at=now,
            )
            last = self._state.get(terminal.id)
            if (
                last is None
                or last.identity != state.identity
                or (last.output_tail != state.output_tail and now - last.at >= self.interval)
            ):
                due.append((terminal, state))
        records = []
        for terminal, state in due:
            try:
                checkpoint = await terminal.final_screen()
            except Exception:
                log.exception(
                    "terminal %s: cannot capture its screen for the autosave", terminal.id
                )
                continue
            if terminal.deleted:
                continue
            records.append(revive.saved_record(terminal, cwds[terminal.id], checkpoint))
            self._state[terminal.id] = state
        gone, self._forgotten = self._forgotten, set()
        if records or gone:
            await asyncio.to_thread(_write, self.directory, records, gone)
            self.saves += len(records)
        if prune:
            # Files of terminals that did not come back (a revive that failed, a closed tab
            # whose removal a crash interrupted).
            keep = {t.id for t in terminals}
            await asyncio.to_thread(_prune, self.directory, keep)
