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
Whatever follows T (non-simple output included) then acts on equal states, so a skip needs
only the simple bytes before the first non-simple sequence.
The model skips only on the main screen (the proof does not need it; being conservative costs
nothing there). Bytes U+009B/U+009D (C2 9B, C2 9D in UTF-8) are C1 CSI/OSC introducers for
pyte, so they are not simple.
"""

from __future__ import annotations

import re

SIMPLE_CSI_FINALS = b"mKGCDXP@`"
# An ESC not starting a simple CSI (a literal first byte: the regex engine skips ahead fast).
ESC_NON_SIMPLE = re.compile(rb"\x1b(?!\[[0-9;]*[" + re.escape(SIMPLE_CSI_FINALS) + rb"])")
C1_INTRODUCER = re.compile(rb"\xc2[\x9b\x9d]")
# A sequence cut by the end of the data (it may still turn out simple).
INCOMPLETE = re.compile(rb"\x1b(?:\[[0-9;]*)?")
SGR = re.compile(rb"\x1b\[[0-9;]*m")
# An SGR whose first parameter resets everything, reversed (searched in reversed bytes).
RESET_SGR_REVERSED = re.compile(rb"m(?:[0-9;]*;)?0*\[\x1b")
RESET_SEARCH_WINDOW = 4096


def first_non_simple(data: bytearray, start: int, end: int) -> int:
    """Where the first non-simple sequence in data[start:end] starts, or -1.

    Plain text costs two memchr calls; each ESC one regex step in C."""
    first = end
    escape = data.find(b"\x1b", start, end)
    if escape >= 0:
        found = ESC_NON_SIMPLE.search(data, escape, end)
        if found is not None:
            first = found.start()
    c2 = data.find(b"\xc2", start, first)
    if c2 >= 0:
        found = C1_INTRODUCER.search(data, c2, first)
        if found is not None:
            first = found.start()
    return -1 if first == end else first


def scan(data: bytearray, start: int) -> tuple[int, int]:
    """Classify data[start:] up to its first non-simple sequence. Returns how far the bytes
    are known simple, and where that sequence starts (-1 if none). A sequence or a C2 byte
    cut by the end of the data is left unclassified: more bytes will tell."""
    end = len(data)
    last_escape = data.rfind(b"\x1b", start)
    if last_escape >= 0 and INCOMPLETE.fullmatch(data, last_escape):
        end = last_escape
    elif end > start and data[end - 1] == 0xC2:
        end -= 1
    first = first_non_simple(data, start, end)
    return (end if first < 0 else first), first


def sgr_replay(data: bytearray, start: int, end: int) -> bytes:
    """The SGR sequences of simple bytes data[start:end] that determine the pen after them."""
    if data.rfind(b"\x1b", start, end) < 0:
        return b""
    # The last SGR starting with a reset, searched backwards in growing windows.
    window = RESET_SEARCH_WINDOW
    while True:
        low = max(start, end - window)
        reset = RESET_SGR_REVERSED.search(data[low:end][::-1])
        if reset is not None:
            start = end - reset.end()
            break
        if low == start:
            break
        window *= 8
    sequences = SGR.findall(data, start, end)
    return b"".join(reversed(dict.fromkeys(reversed(sequences))))


def find_cut(data: bytearray, start: int, end: int, line_feeds: int) -> int:
    """The largest position right after a CR LF in data[start:end] such that data[cut:end]
    still holds `line_feeds` line feeds, or -1."""
    position = end
    for _ in range(line_feeds):
        position = data.rfind(b"\n", start, position)
        if position < 0:
            return -1
    pair = data.rfind(b"\r\n", start, position)
    return -1 if pair < 0 else pair + 2
