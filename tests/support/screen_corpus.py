"""Helpers for the screen-model tests: the reference screen, state comparison, output
captured from real programs in real pseudo-terminals, and generated output."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import termios
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from desktop.ptyhost.screen.reference import TerminalScreen, TerminalStream
from tests.support.wait import What, wait_until

# ----- the reference ---------------------------------------------------------------------


@dataclass(frozen=True)
class Resize:
    cols: int
    rows: int


Event = bytes | Resize


class Reference:
    """pyte with the alternate-screen subclass, fed every byte, no skipping."""

    def __init__(self, cols: int, rows: int) -> None:
        self.screen = TerminalScreen(cols, rows)
        self.stream = TerminalStream(self.screen)

    def feed(self, data: bytes) -> Reference:
        self.stream.feed(data)
        return self

    def apply(self, events: Iterable[Event]) -> Reference:
        for event in events:
            if isinstance(event, Resize):
                self.screen.resize(lines=event.rows, columns=event.cols)
            else:
                self.feed(event)
        return self


def state(screen: TerminalScreen) -> dict[str, object]:
    """Everything a checkpoint must reproduce, in comparable form."""

    def cells(buffer: object) -> list[list[object]]:
        assert isinstance(buffer, dict)
        rows = []
        for y in range(screen.lines):
            line = buffer.get(y)
            rows.append(
                [
                    line[x] if line is not None else screen.default_char
                    for x in range(screen.columns)
                ]
            )
        return rows

    cursor = screen.cursor
    return {
        "size": (screen.columns, screen.lines),
        "cells": cells(screen.buffer),
        "main_cells": cells(screen.main_buffer) if screen.main_buffer is not None else None,
        "cursor": (cursor.x, cursor.y, cursor.hidden),
        "pen": cursor.attrs,
        "margins": screen.margins,
        "modes": sorted(screen.mode),
        "tabstops": sorted(screen.tabstops),
        "saved_main": screen.saved_main,
        "saved_alt": screen.saved_alt,
        "title": (screen.title, screen.icon_name),
        "keypad": screen.application_keypad,
    }


def replay(checkpoint: bytes, cols: int, rows: int) -> TerminalScreen:
    """A fresh reference screen of the same size fed the checkpoint."""
    return Reference(cols, rows).feed(checkpoint).screen


def diff(expected: dict[str, object], actual: dict[str, object]) -> str:
    lines = []
    for key in expected:
        if expected[key] == actual[key]:
            continue
        if key in ("cells", "main_cells") and expected[key] and actual[key]:
            exp, act = expected[key], actual[key]
            assert isinstance(exp, list)
            assert isinstance(act, list)
            for y, (erow, arow) in enumerate(zip(exp, act, strict=True)):
                for x, (ecell, acell) in enumerate(zip(erow, arow, strict=True)):
                    if ecell != acell:
                        lines.append(f"{key}[{y}][{x}]: expected {ecell}, got {acell}")
                        break
        else:
            lines.append(f"{key}: expected {expected[key]!r}, got {actual[key]!r}")
    return "\n".join(lines[:20])


# ----- real programs in a real PTY ---------------------------------------------------------


class Capture:
    """A program in a pseudo-terminal; collects everything it writes."""

    def __init__(self, argv: Sequence[str], cols: int, rows: int, cwd: Path | None = None) -> None:
        env = dict(os.environ, TERM="xterm-256color", LANG="C.UTF-8", LC_ALL="C.UTF-8")
        env.pop("LESS", None)
        env["COLUMNS"], env["LINES"] = str(cols), str(rows)
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.process = subprocess.Popen(
            list(argv),
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
        os.close(slave)
        self.master = master
        self.output = bytearray()

    def _read(self, timeout: float) -> bool:
        """Read what is available within `timeout`; False at end of output."""
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return True
        try:
            data = os.read(self.master, 65536)
        except OSError:
            return False
        if not data:
            return False
        self.output += data
        return True

    def wait_for(self, marker: bytes, timeout: float = 15.0) -> None:
        """Read until `marker` has been written (after what was read so far)."""
        start = len(self.output)

        def seen() -> bool:
            if marker in self.output[max(0, start - len(marker)) :]:
                return True
            if not self._read(0.05):
                raise AssertionError(f"the output ended before {marker!r}; {self._tail()}")
            return False

        self._reading(seen, timeout, lambda: f"{marker!r} not seen; {self._tail()}")

    def send(self, data: bytes) -> None:
        os.write(self.master, data)

    def finish(self, timeout: float = 15.0) -> bytes:
        """Read to the end of output (EIO once every holder of the terminal is gone) and
        reap the program."""
        self._reading(lambda: not self._read(0.05), timeout, "the program finished")
        self.process.wait(timeout=5)
        os.close(self.master)
        return bytes(self.output)

    def _reading(self, done: Callable[[], bool], timeout: float, what: What) -> None:
        """Reads (each read waits up to 50 ms for output) until `done`; on a failure the
        program is stopped."""
        try:
            wait_until(done, timeout, interval=0, what=what)
        except AssertionError:
            self.kill()
            raise

    def _tail(self) -> str:
        return f"output ends {bytes(self.output[-300:])!r}"

    def kill(self) -> None:
        """Stop the program (and its process group) after a failure."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=5)
        os.close(self.master)


def run(argv: Sequence[str], cols: int = 80, rows: int = 24, cwd: Path | None = None) -> bytes:
    capture = Capture(argv, cols, rows, cwd)
    return capture.finish()


# ----- generated output --------------------------------------------------------------------


def numbered_lines(start: int, count: int, coloured: bool = True) -> bytes:
    """seq-like lines, some coloured as ls or git would."""
    if not coloured:
        return b"".join(b"%d\r\n" % i for i in range(start, start + count))
    return b"".join(
        b"\x1b[01;3%dm%d\x1b[0m line \x1b[38;5;%dm%d\x1b[m\x1b[K\r\n" % (i % 8, i, i % 256, i * 7)
        for i in range(start, start + count)
    )


def full_screen_redraws(frames: int, cols: int, rows: int) -> bytes:
    """What a full-screen program sends: every cell cursor-addressed, coloured."""
    out = [b"\x1b[?1049h\x1b[?25l"]
    for frame in range(frames):
        out.append(b"\x1b[H")
        for y in range(rows):
            colour = (frame + y) % 256
            text = (b"%d:%d " % (frame, y) * cols)[: cols - 1]
            out.append(b"\x1b[%d;1H\x1b[38;5;%dm%s\x1b[K" % (y + 1, colour, text))
        out.append(b"\x1b[0m\x1b[%d;%dH" % (rows, cols // 2))
    return b"".join(out)


PRINTABLE_CYCLE = bytes(range(0x20, 0x7F))


def long_line(length: int, offset: int = 0) -> bytes:
    """`length` printable ASCII characters and no control: every cell tells where it came
    from (the 95-character cycle is coprime with most widths)."""
    repeats = (offset + length) // len(PRINTABLE_CYCLE) + 1
    return (PRINTABLE_CYCLE * repeats)[offset : offset + length]
