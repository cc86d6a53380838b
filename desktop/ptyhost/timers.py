"""Timers: a terminal's pending calls by name, at most one per name, all cancelled together."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Literal

# drain: give up reading a PTY held open after its child exited; idle: parse queued screen
# output after a quiet spell; yield: a flooding terminal pauses for a typist elsewhere;
# poll: check for the child's exit without a pidfd; kill: SIGKILL after a hang-up (or after
# a job's SIGTERM); timeout: a job ran longer than it may.
TimerName = Literal["drain", "idle", "yield", "poll", "kill", "timeout"]


class Timers:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._handles: dict[TimerName, asyncio.TimerHandle] = {}

    def start(self, name: TimerName, delay: float, callback: Callable[[], None]) -> None:
        """Call `callback` after `delay` seconds, replacing a pending call of the same name."""
        self.cancel(name)
        self._handles[name] = self._loop.call_later(delay, self._fire, name, callback)

    def pending(self, name: TimerName) -> bool:
        return name in self._handles

    def cancel(self, name: TimerName) -> None:
        handle = self._handles.pop(name, None)
        if handle is not None:
            handle.cancel()

    def cancel_all(self) -> None:
        for handle in self._handles.values():
            handle.cancel()
        self._handles.clear()

    def _fire(self, name: TimerName, callback: Callable[[], None]) -> None:
        del self._handles[name]
        callback()
