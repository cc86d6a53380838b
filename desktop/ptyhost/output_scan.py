"""Find window titles (OSC 0/2) and bells (BEL outside an OSC) in terminal output.

Scans with bytes.find, so a chunk without ESC ] or BEL costs two C-speed searches; the
Python loop runs once per escape sequence of interest, never once per byte. Sequences may be
split across chunks.
"""

from __future__ import annotations

from dataclasses import dataclass

ESC = 0x1B
BEL = b"\x07"
OSC_START = b"\x1b]"
# Longer OSC bodies (e.g. OSC 52 clipboard payloads) are skipped, not collected.
MAX_OSC_BODY = 4096
MAX_TITLE_CHARS = 1024


@dataclass(frozen=True, slots=True)
class ScanResult:
    title: str | None = None
    bell: bool = False


NOTHING = ScanResult()


class OutputScanner:
    def __init__(self) -> None:
        self._in_osc = False
        self._osc_body = bytearray()
        self._osc_overflow = False
        self._esc_pending = False

    def scan(self, data: bytes | bytearray | memoryview) -> ScanResult:
        chunk = bytes(data) if not isinstance(data, bytes) else data
        if (
            not self._in_osc
            and not self._esc_pending
            and BEL not in chunk
            # A one-byte search (memchr) first: the two-byte one is ~40x slower on floods.
            and (b"\x1b" not in chunk or OSC_START not in chunk)
        ):
            if chunk.endswith(b"\x1b"):
                self._esc_pending = True
            return NOTHING
        title: str | None = None
        bell = False
        index = 0
        size = len(chunk)
        if self._esc_pending:
            self._esc_pending = False
            if self._in_osc:
                if chunk[:1] == b"\\":
                    title = _newer(self._finish_osc(), title)
                    index = 1
                else:
                    self._abort_osc()
            elif chunk[:1] == b"]":
                self._start_osc()
                index = 1
        while index < size:
            if self._in_osc:
                bel_at = chunk.find(BEL, index)
                esc_at = chunk.find(b"\x1b", index, bel_at if bel_at >= 0 else size)
                if esc_at >= 0:
                    self._collect(chunk, index, esc_at)
                    if esc_at + 1 >= size:
                        self._esc_pending = True
                        return ScanResult(title, bell)
                    if chunk[esc_at + 1] == 0x5C:  # ESC \ (string terminator)
                        title = _newer(self._finish_osc(), title)
                        index = esc_at + 2
                    else:
                        # Another escape sequence starts: the OSC was cut short.
                        self._abort_osc()
                        index = esc_at
                    continue
                if bel_at >= 0:
                    self._collect(chunk, index, bel_at)
                    title = _newer(self._finish_osc(), title)
                    index = bel_at + 1
                    continue
                self._collect(chunk, index, size)
                return ScanResult(title, bell)
            osc_at = chunk.find(OSC_START, index)
            limit = osc_at if osc_at >= 0 else size
            if not bell and chunk.find(BEL, index, limit) >= 0:
                bell = True
            if osc_at < 0:
                if chunk.endswith(b"\x1b"):
                    self._esc_pending = True
                break
            self._start_osc()
            index = osc_at + 2
        return ScanResult(title, bell)

    def _start_osc(self) -> None:
        self._in_osc = True
        self._osc_body.clear()
        self._osc_overflow = False

    def _abort_osc(self) -> None:
        self._in_osc = False
        self._osc_body.clear()

    def _collect(self, chunk: bytes, start: int, end: int) -> None:
        if self._osc_overflow or end <= start:
            return
        if len(self._osc_body) + end - start > MAX_OSC_BODY:
            self._osc_overflow = True
            self._osc_body.clear()
            return
        self._osc_body += chunk[start:end]

    def _finish_osc(self) -> str | None:
        body = bytes(self._osc_body)
        overflow = self._osc_overflow
        self._abort_osc()
        if overflow:
            return None
        code, separator, text = body.partition(b";")
        if not separator or code not in (b"0", b"2"):
            return None
        title = text.decode("utf-8", errors="replace")
        title = "".join(ch for ch in title if ch.isprintable())
        return title[:MAX_TITLE_CHARS]


def _newer(found: str | None, previous: str | None) -> str | None:
    return previous if found is None else found
