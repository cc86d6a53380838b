"""Printable-ASCII scans over output bytes for the PTY host's screen model, in C when the
extension is built, with `re` versions as the fallback and the tests' reference.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# Printable ASCII from a position: a match stops at the first other byte.
PRINTABLE = re.compile(rb"[\x20-\x7e]*")

Scan = Callable[[bytes | bytearray, int, int], int]


def printable_end_re(data: bytes | bytearray, start: int, end: int) -> int:
    """The end of the printable bytes from data[start] (at most `end`)."""
    found = PRINTABLE.match(data, start, end)
    assert found is not None  # the pattern matches the empty string
    return found.end()


def printable_start_re(data: bytes | bytearray, start: int, end: int) -> int:
    """Where the printable bytes ending at data[end - 1] begin (not before `start`).
    Reversed copies of growing blocks: a run is usually short, the data may be long."""
    high, block = end, 4096
    while high > start:
        low = max(start, high - block)
        backwards = data[low:high][::-1]
        printable = printable_end_re(backwards, 0, len(backwards))
        if printable < len(backwards):
            return high - printable
        high, block = low, block * 2
    return start


def _native() -> tuple[Scan, Scan] | None:
    try:
        from desktop.native._pty import ffi, lib
    except ImportError:
        return None

    def printable_end(data: bytes | bytearray, start: int, end: int) -> int:
        """The end of the printable bytes from data[start] (at most `end`)."""
        if not 0 <= start <= end <= len(data):
            raise IndexError(f"bad range {start}:{end} of {len(data)} bytes")
        return int(lib.desk_printable_end(ffi.from_buffer("unsigned char[]", data), start, end))

    def printable_start(data: bytes | bytearray, start: int, end: int) -> int:
        """Where the printable bytes ending at data[end - 1] begin (not before `start`)."""
        if not 0 <= start <= end <= len(data):
            raise IndexError(f"bad range {start}:{end} of {len(data)} bytes")
        return int(lib.desk_printable_start(ffi.from_buffer("unsigned char[]", data), start, end))

    return printable_end, printable_start


printable_end, printable_start = _native() or (printable_end_re, printable_start_re)
