"""The screen model of a terminal: cheap to feed (output is only queued), exact when asked for a
checkpoint (the queue is parsed in a worker thread first).
"""

from __future__ import annotations

import threading
from collections import deque

from pyte import modes as mo

from desktop.ptyhost.screen.checkpoint import checkpoint as serialise
from desktop.ptyhost.screen.fast import FastScreen, FastStream
from desktop.ptyhost.screen.skip import (
    find_cut,
    first_non_simple,
    long_runs,
    run_keep,
    scan,
    sgr_replay,
    text_runs,
)
from desktop.values import strict_int

MAX_SIZE = 9999  # CSI parameters stop there, so a checkpoint could not address more
# Feeding tries to skip once the front segment reaches this size, then at each doubling.
COMPACT_MIN = 64 * 1024
# A skip must drop at least this much to be worth rewriting the segment.
MIN_SKIP = 1024
# A non-simple sequence followed by skippable lines is parsed up to the end of its line (or
# this far), then the parser is checked to be between sequences.
SEQUENCE_SLACK = 4096
# Piece sizes while the parser is inside a sequence: from the first, doubling to the last.
IN_SEQUENCE_STEP = 64
MAX_IN_SEQUENCE_STEP = 64 * 1024
# Largest piece parsed at once when nothing can be skipped in it.
MAX_PIECE = 256 * 1024


def _dimension(name: str, value: object) -> int:
    if not strict_int(value):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if not 1 <= value <= MAX_SIZE:
        raise ValueError(f"{name} must be between 1 and {MAX_SIZE}, not {value}")
    return value


def _check_size(cols: object, rows: object) -> tuple[int, int]:
    return _dimension("cols", cols), _dimension("rows", rows)


class _Segment:
    """Queued output between two resizes: data[start:]. Positions are indexes into `data`."""

    __slots__ = ("data", "first_unsafe", "next_compact", "scanned", "sealed", "seq", "start")

    def __init__(self, seq: int) -> None:
        self.seq = seq
        self.data = bytearray()
        self.start = 0
        self.scanned = 0  # data[start:scanned] is simple output
        self.first_unsafe = -1  # where the first non-simple sequence starts (= scanned), or -1
        self.next_compact = COMPACT_MIN  # feed tries to skip when the segment is this long
        self.sealed = False  # a checkpoint waits for this segment: feed starts a new one

    def __len__(self) -> int:
        return len(self.data) - self.start

    def append(self, data: bytes | bytearray | memoryview) -> None:
        self.data += data
        if self.first_unsafe < 0:
            self.scanned, self.first_unsafe = scan(self.data, self.scanned)

    def take(self, count: int) -> bytes:
        """Remove and return the first `count` bytes."""
        end = self.start + count
        piece = bytes(self.data[self.start : end])
        self.start = end
        if 0 <= self.first_unsafe < end:
            # The non-simple sequence went: classify what follows it.
            self.scanned, self.first_unsafe = scan(self.data, end)
        elif self.scanned < end:
            self.scanned = end  # an unfinished sequence at the end went: classify from here
        self._trim()
        self.next_compact = max(COMPACT_MIN, len(self) * 2)
        return piece

    def replace_front(self, end: int, replacement: bytes) -> None:
        """Replace data[start:end] by a replacement no longer than it, in place (the rest
        of the queue is not moved)."""
        assert len(replacement) <= end - self.start
        self.start = end - len(replacement)
        self.data[self.start : end] = replacement
        self._trim()

    def _trim(self) -> None:
        """Free the consumed or dropped bytes before `start` once they are half the buffer:
        amortised O(1) per byte, and the buffer stays under twice what is queued."""
        start = self.start
        if start and start * 2 >= len(self.data):
            del self.data[:start]
            self.scanned -= start
            if self.first_unsafe >= 0:
                self.first_unsafe -= start
            self.start = 0


class _Resize:
    __slots__ = ("cols", "rows", "seq")

    def __init__(self, seq: int, cols: int, rows: int) -> None:
        self.seq, self.cols, self.rows = seq, cols, rows


class ScreenModel:
    """A terminal screen that takes output at C speed and produces exact checkpoints."""

    def __init__(self, cols: int, rows: int) -> None:
        cols, rows = _check_size(cols, rows)
        self._lock = threading.Lock()
        self._parse_lock = threading.Lock()
        self._queue: deque[_Segment | _Resize] = deque()
        self._seq = 0
        self._pending = 0
        self._size = (cols, rows)
        self._screen = FastScreen(cols, rows)
        self._stream = FastStream(self._screen)
        # State at the front of the queue (valid while no parse is running).
        self._parsing = False
        self._front_ground = True  # parser between sequences, no partial UTF-8 character
        self._front_safe = True  # ... and on the main screen with no scroll region
        self._front_wraps = True  # ... and with auto-wrap on and insert mode off
        self._in_sequence_step = IN_SEQUENCE_STEP
        self.skipped_bytes = 0  # statistics: queued bytes dropped without parsing

    # ----- feeding (any thread, cheap) -----------------------------------------------------

    @property
    def size(self) -> tuple[int, int]:
        """(cols, rows) after every resize so far, parsed or not."""
        return self._size

    @property
    def pending_bytes(self) -> int:
        """Queued bytes not parsed yet (after skipping)."""
        return self._pending

    @property
    def buffered_bytes(self) -> int:
        """Bytes the queue's buffers hold: the pending ones and those parsed or dropped but
        not freed yet, which are never more than the pending ones."""
        with self._lock:
            return sum(len(item.data) for item in self._queue if isinstance(item, _Segment))

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        """Queue output bytes. Never parses and never waits for a parse."""
        if not isinstance(data, bytes | bytearray | memoryview):
            raise TypeError(f"output must be bytes, not {type(data).__name__}")
        if not data:
            return
        with self._lock:
            last = self._queue[-1] if self._queue else None
            if not isinstance(last, _Segment) or last.sealed:
                self._seq += 1
                last = _Segment(self._seq)
                self._queue.append(last)
            before = len(last)
            last.append(data)
            self._pending += len(last) - before
            if len(last) >= last.next_compact and self._can_compact(last):
                self._compact(last)

    def resize(self, cols: int, rows: int) -> None:
        """Resize after the output queued so far (which is parsed at the old size)."""
        cols, rows = _check_size(cols, rows)
        with self._lock:
            self._seq += 1
            self._queue.append(_Resize(self._seq, cols, rows))
            self._size = (cols, rows)
        # Apply it now if nothing is queued before it and no parse is running.
        if self._parse_lock.acquire(blocking=False):
            try:
                self._drain(None, None, resizes_only=True)
            finally:
                self._parse_lock.release()

    # ----- skipping (under _lock) ----------------------------------------------------------

    def _can_compact(self, segment: _Segment) -> bool:
        return (
            self._front_safe
            and not self._parsing
            and bool(self._queue)
            and self._queue[0] is segment
        )

    def _compact(self, segment: _Segment) -> None:
        """Drop what the simple output at the front of the front segment makes irrelevant
        (see skip.py): the lines before the last 2 * rows line feeds or the last long
        run of text, then the start of each long run. What is kept before the last dropped
        part moves up to it."""
        data, start, end = segment.data, segment.start, segment.scanned
        cols, rows = self._screen.columns, self._screen.lines
        drops: list[tuple[int, int]] = []
        cut = find_cut(data, start, end, 2 * rows)
        if self._front_wraps:
            drops, last_run = text_runs(data, start, end, cols, rows, MIN_SKIP)
            if last_run >= 0:
                # It wraps at least 2 * rows times: as good as that many line feeds.
                line_start = data.rfind(b"\r\n", start, last_run)
                if line_start >= 0:
                    cut = max(cut, line_start + 2)
        kept: list[bytes | bytearray] = []
        position = start
        if cut - start >= MIN_SKIP:
            kept.append(sgr_replay(data, start, cut) + b"\r")
            position = cut
        for drop_start, drop_end in drops:
            if drop_start >= position:
                kept.append(data[position:drop_start])
                position = drop_end
        if position > start:
            replacement = b"".join(kept)
            segment.replace_front(position, replacement)
            dropped = position - start - len(replacement)
            self._pending -= dropped
            self.skipped_bytes += dropped
        segment.next_compact = max(COMPACT_MIN, len(segment) * 2)

    # ----- parsing (worker threads) --------------------------------------------------------

    def catch_up(self, max_bytes: int | None = None) -> None:
        """Parse queued output (about `max_bytes` of it, or all). Blocks other parsers."""
        if max_bytes is not None and (not strict_int(max_bytes) or max_bytes < 0):
            raise ValueError(f"max_bytes must be None or a non-negative int, not {max_bytes!r}")
        with self._parse_lock:
            self._drain(max_bytes, None)

    def _seal(self) -> int | None:
        """Mark the end of what is queued now; later output goes after it."""
        with self._lock:
            if not self._queue:
                return None
            last = self._queue[-1]
            if isinstance(last, _Segment):
                last.sealed = True
            return last.seq

    def _drain(self, budget: int | None, until: int | None, resizes_only: bool = False) -> None:
        """Parse queue items (up to sequence number `until`). Caller holds _parse_lock."""
        while budget is None or budget > 0:
            with self._lock:
                item = self._take(budget, until, resizes_only)
                if item is None:
                    return
                self._parsing = True
            try:
                if isinstance(item, _Resize):
                    self._screen.resize(lines=item.rows, columns=item.cols)
                else:
                    self._stream.feed(item)
                    if budget is not None:
                        budget -= len(item)
            finally:
                ground = self._stream.at_ground
                screen = self._screen
                safe = ground and screen.margins is None and not screen.in_alternate_screen
                wraps = safe and mo.DECAWM in screen.mode and mo.IRM not in screen.mode
                with self._lock:
                    self._parsing = False
                    self._front_ground = ground
                    self._front_safe = safe
                    self._front_wraps = wraps
                    if ground:
                        self._in_sequence_step = IN_SEQUENCE_STEP

    def _take(
        self, budget: int | None, until: int | None, resizes_only: bool
    ) -> bytes | _Resize | None:
        """The next thing to parse from the front of the queue. Caller holds _lock."""
        while self._queue:
            item = self._queue[0]
            if until is not None and item.seq > until:
                return None
            if isinstance(item, _Resize):
                self._queue.popleft()
                return item
            if resizes_only:
                return None
            if not len(item):
                self._queue.popleft()
                continue
            if self._front_safe:
                self._compact(item)
            if not self._front_ground:
                count = min(len(item), self._in_sequence_step)
                self._in_sequence_step = min(self._in_sequence_step * 2, MAX_IN_SEQUENCE_STEP)
            elif item.first_unsafe < 0:
                count = len(item)
            else:
                count = self._piece_end(item) - item.start
            if budget is not None:
                count = min(count, budget)
            piece = item.take(count)
            self._pending -= count
            if not len(item):
                self._queue.popleft()
            return piece
        return None

    def _piece_end(self, segment: _Segment) -> int:
        """Where to stop parsing a segment with a non-simple sequence at `first_unsafe`: just
        past it when enough simple lines follow to skip some, or at the start of a run of
        text long enough to cut, else after a large piece (each piece costs a lock round and
        a scan; tiny ones add up)."""
        data = segment.data
        screen = self._screen
        line_feeds = 2 * screen.lines
        position = segment.first_unsafe
        stop = min(len(data), position + MAX_PIECE)
        min_run = max(run_keep(screen.columns, screen.lines), MIN_SKIP)
        runs = long_runs(data, position + 1, stop, min_run, first_only=True)
        run_start = runs[0][0] if runs else stop
        if data.count(b"\n", position, stop) < line_feeds and not runs:
            return stop
        while True:
            following = first_non_simple(data, position + 1, stop)
            gap_end = stop if following < 0 else following
            if data.count(b"\n", position, gap_end) >= line_feeds:
                line_end = data.find(b"\n", position, position + SEQUENCE_SLACK)
                return line_end + 1 if line_end >= 0 else min(len(data), position + SEQUENCE_SLACK)
            if run_start < gap_end:
                return max(position + 1, run_start)
            if following < 0:
                return stop
            position = following

    # ----- results -------------------------------------------------------------------------

    def _drain_all(self) -> None:
        self._drain(None, self._seal())

    def checkpoint(self, include_partial: bool = True) -> bytes:
        """Bytes that, written to an empty terminal of this size, reproduce the screen
        after all output fed before the call.

        If that output ends inside an escape sequence or a UTF-8 character, the checkpoint
        ends with its beginning, so the output that follows is understood as it would have
        been; `include_partial=False` leaves it out (for a screen that nothing will follow,
        e.g. one saved to be shown above a new shell)."""
        with self._parse_lock:
            self._drain_all()
            data = serialise(self._screen)
            return data + self._stream.pending_sequence() if include_partial else data

    def snapshot(self) -> tuple[list[str], tuple[int, int]]:
        """The caught-up screen's lines (right-trimmed) and cursor (x, y)."""
        with self._parse_lock:
            self._drain_all()
            screen = self._screen
            lines = []
            for y in range(screen.lines):
                line = screen.buffer.get(y)
                if line is None:
                    lines.append("")
                else:
                    lines.append("".join(line[x].data for x in range(screen.columns)).rstrip())
            cursor = screen.cursor
            return lines, (min(cursor.x, screen.columns - 1), cursor.y)

    @property
    def in_alternate_screen(self) -> bool:
        """Whether the caught-up screen shows the alternate buffer."""
        with self._parse_lock:
            self._drain_all()
            return self._screen.in_alternate_screen
