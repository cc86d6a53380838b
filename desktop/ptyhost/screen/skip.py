"""Safe skipping: dropping queued output that cannot change the final screen, at C speed.

Why each skip is safe (simple output, lines scrolled away, long runs cut) is proved in
docs/screen-skip.md."""

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
