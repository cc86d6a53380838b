"""Safe skipping: dropping queued output that cannot change the final screen, at C speed.

"Simple" output is printable text (UTF-8 included), C0 controls other than ESC, and the CSI
sequences SGR (m), EL (K), CHA (G), HPA (`), CUF (C), CUB (D), ECH (X), DCH (P) and ICH (@)
with plain numeric parameters. None of them moves the cursor up, changes a mode, the scroll
region, the tab stops or the screen buffer: they act on the cursor row, the cursor column,
and the pen (SGR), and move down only through line feeds and auto-wrap.

Claim: start from a state S with no scroll region, the parser between sequences and no
partial UTF-8 character; queued bytes P + T, where P ends with CR LF, both simple, and T
holds at least 2 * rows line feeds. Then S + P + T and S + P' + T end in the same state,
where P' = the SGR sequences of P (what matters of them) + CR:
- Every line feed (and wrap) moves the cursor down or, at the bottom row, scrolls the whole
  screen. After `rows - 1` of them the cursor is at the bottom whatever its start row; each
  further one scrolls. 2 * rows line feeds scroll at least `rows + 1` times, so every row on
  screen at the end entered blank from the bottom during T, and the row above the top one
  (which a zero-width character at column 0 could modify) did too; rows that existed
  before T are gone, whatever P left in them.
- Those rows depend only on T, on the column where T starts (0: P ends with CR LF, P' with
  CR), and on the pen at its start (P and P' leave the same pen). Modes (insert, auto-wrap,
  LNM, reverse screen, origin) and tab stops act the same in both runs: simple output does
  not change them. Nothing else survives from P: the cursor ends on the bottom row in both.
- SGR sequences are constant assignments of some attributes, so only the last occurrence of
  each distinct sequence matters, and nothing before the last one starting with a reset
  (first parameter 0 or empty) does.
The model skips only on the main screen (the proof does not need it; being conservative costs
nothing there). Bytes U+009B/U+009D (C2 9B, C2 9D in UTF-8) are C1 CSI/OSC introducers for
pyte, so they are not simple.
"""

from __future__ import annotations

import re

SIMPLE_CSI_FINALS = b"mKGCDXP@`"
# The first non-simple position: an ESC not starting a simple CSI, or a C1 CSI/OSC.
NON_SIMPLE = re.compile(rb"\x1b(?!\[[0-9;]*[" + re.escape(SIMPLE_CSI_FINALS) + rb"])|\xc2[\x9b\x9d]")
# The last non-simple position at or after the match start.
LAST_NON_SIMPLE = re.compile(rb"(?s:.*)(" + NON_SIMPLE.pattern + rb")")
# A sequence cut by the end of the data (it may still turn out simple).
INCOMPLETE = re.compile(rb"\x1b(?:\[[0-9;]*)?")
SGR = re.compile(rb"\x1b\[[0-9;]*m")
# An SGR whose first parameter resets everything, reversed (searched in reversed bytes).
RESET_SGR_REVERSED = re.compile(rb"m(?:[0-9;]*;)?0*\[\x1b")


class ScanResult:
    """Classification of a buffer's prefix."""

    __slots__ = ("last_non_simple", "scanned")

    def __init__(self, scanned: int, last_non_simple: int) -> None:
        self.scanned = scanned  # bytes [0, scanned) are classified
        self.last_non_simple = last_non_simple  # start of the last non-simple sequence, or -1


def scan(data: bytearray, start: int) -> ScanResult:
    """Classify `data[start:]`: find its last non-simple sequence start, and how far the
    classification is final (a sequence or a C2 byte cut by the end is left for later)."""
    match = NON_SIMPLE.search(data, start)
    end = len(data) - 1 if data.endswith(b"\xc2") else len(data)
    if match is None:
        return ScanResult(max(end, start), -1)
    last = LAST_NON_SIMPLE.match(data, match.start())
    assert last is not None
    position = last.start(1)
    if INCOMPLETE.fullmatch(data, position):
        # Cut by the end: classify up to it; the previous non-simple one (if any) stands.
        if position == match.start():
            return ScanResult(position, -1)
        before = LAST_NON_SIMPLE.match(data, match.start(), position)
        assert before is not None
        return ScanResult(position, before.start(1))
    return ScanResult(max(end, position + 1), position)


def sgr_replay(prefix: bytes | bytearray) -> bytes:
    """The SGR sequences of simple bytes `prefix` that determine the pen after them."""
    reset = RESET_SGR_REVERSED.search(prefix[::-1])
    start = len(prefix) - reset.end() if reset is not None else 0
    sequences = SGR.findall(prefix, start)
    return b"".join(reversed(dict.fromkeys(reversed(sequences))))


def find_cut(data: bytearray, end: int, line_feeds: int) -> int:
    """The largest position right after a CR LF such that data[cut:end] still holds
    `line_feeds` line feeds, or -1."""
    position = end
    for _ in range(line_feeds):
        position = data.rfind(b"\n", 0, position)
        if position < 0:
            return -1
    pair = data.rfind(b"\r\n", 0, position)
    return -1 if pair < 0 else pair + 2
