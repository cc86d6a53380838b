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

Long lines without line feeds: a "run" is a stretch of printable ASCII bytes (0x20-0x7e) in
simple output, not inside a CSI sequence (the parameters and final of `ESC [ 3 1 m` are
printable too: a run that follows an ESC starts after the sequence). Claim: from any state
with auto-wrap on (DECAWM), insert mode off and no scroll region, with the parser between
sequences, a run of L characters and its last L' characters, where L' = L - D with D a
multiple of `cols` and L' >= (2 * rows - 1) * cols + 1, end in the same state. So a run can
be cut to its last K + (L mod cols) characters, K = (2 * rows + 1) * cols (more than needed).
- Each character is one cell wide. pyte draws it at cursor column x if x < cols; if x = cols
  (the pending-wrap position after the last column) it first wraps (CR, then index: down a
  row, or at the bottom row a scroll of the whole screen that pops the bottom line, so it
  comes back blank: a fresh line with the default blank, which only DECSCNM sets; LNM adds
  a CR, a no-op at column 0) and draws at column 0. Then x = column + 1, so x <= cols.
- So, from cursor column x0 (0..cols), character i (from 1) goes to column (x0 + i - 1) mod
  cols, and for i >= 2 a wrap comes before it exactly when that column is 0 (the one before
  went to the last column); the first wraps only if x0 = cols. This holds for one column,
  for a pending wrap at the start and for a run that starts mid-row. With D a multiple of
  cols, character j of the kept tail goes to the same column in both runs, and from j = 2 on
  both runs do the same thing: the same wraps and the same cells drawn with the same pen (no
  SGR inside a run). Only the cursor row and the screen at the start of the tail differ.
- The kept tail has at least floor((L' - 1) / cols) >= 2 * rows - 1 wraps from j = 2 on. Each
  wrap moves the cursor down (the row clamps at the bottom) or, at the bottom, scrolls; after
  rows - 1 of them both runs are on the bottom row, and from the next one on they do the very
  same operations, including at least rows scrolls. Every row on screen at the end therefore
  came in blank from the bottom during that common part and got the same cells: the screen,
  the cursor (x, bottom row) and the pen are equal; nothing else is touched by drawing.
- With auto-wrap off or insert mode on, characters act differently, so the model cuts runs
  only when the parsed front of the queue has auto-wrap on and insert mode off (simple
  output cannot change modes), besides the conditions of the first claim.
- A run of n characters wraps at least floor((n - 1) / cols) times from any start column,
  and each wrap moves down or scrolls as a line feed does: in the first claim, T may hold a
  run of at least (2 * rows + 1) * cols characters instead of 2 * rows line feeds (with
  auto-wrap on). So the lines before the last such run (from the CR LF before it) go too.
Runs are found at C speed: aligned blocks of half the shortest run worth cutting are probed
with one regex match each (which stops at the first control: text with line breaks costs a
few steps per block); a block with no control is widened to its run. Multi-byte UTF-8 text is
not cut (one-cell and other characters would have to be told apart).
"""

from __future__ import annotations

import re

from desktop.native.bytescan import printable_end, printable_start

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


# ----- runs of printable ASCII text ---------------------------------------------------------

SIMPLE_CSI_BODY = re.compile(rb"\[[0-9;]*[" + re.escape(SIMPLE_CSI_FINALS) + rb"]")
ESC = 0x1B


def run_keep(cols: int, rows: int) -> int:
    """The part of a run that is always kept (plus length mod cols)."""
    return (2 * rows + 1) * cols


def long_runs(
    data: bytearray, start: int, end: int, min_length: int, first_only: bool = False
) -> list[tuple[int, int]]:
    """The maximal stretches of printable ASCII bytes (0x20-0x7e) at least `min_length` long
    in data[start:end], as (start, end) pairs (only the first one if `first_only`). Every
    such stretch holds a whole aligned block of half that length, and probing a block stops
    at its first control byte."""
    block = max(1, (min_length + 1) // 2)
    runs = []
    probe = start
    while probe + block <= end:
        if printable_end(data, probe, probe + block) < probe + block:
            probe += block
            continue
        run_end = printable_end(data, probe + block, end)
        run_start = printable_start(data, start, probe)
        if run_end - run_start >= min_length:
            runs.append((run_start, run_end))
            if first_only:
                break
        probe = run_end + (start - run_end) % block  # the next aligned block
    return runs


def text_runs(
    data: bytearray, start: int, end: int, cols: int, rows: int, min_drop: int
) -> tuple[list[tuple[int, int]], int]:
    """The runs of at least run_keep(cols, rows) characters in simple bytes data[start:end]
    (which start between sequences): the parts of them that can be dropped (see above), each
    at least `min_drop` long, as (start, end) pairs, and where the last such run starts (-1
    if none), which wraps enough to stand for 2 * rows line feeds. Runs shorter than
    `min_drop` are not looked for (on a tiny screen, the probes would be too many)."""
    keep = run_keep(cols, rows)
    dropped = []
    last = -1
    for run_start, run_end in long_runs(data, start, end, max(keep, min_drop)):
        if run_start > start and data[run_start - 1] == ESC:
            body = SIMPLE_CSI_BODY.match(data, run_start, run_end)
            if body is None:
                continue  # cannot happen in simple output; nothing is dropped if it does
            run_start = body.end()
        length = run_end - run_start
        if length < keep:
            continue
        last = run_start
        drop_end = run_end - keep - length % cols
        if drop_end - run_start >= max(min_drop, 1):
            dropped.append((run_start, drop_end))
    return dropped, last
