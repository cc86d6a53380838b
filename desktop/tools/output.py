"""Terminal output made readable for a model: escapes removed, CR overwrites resolved, and a
head+tail truncation that says what it cut."""

from __future__ import annotations

import re
from dataclasses import dataclass

OUTPUT_BUDGET = 30_000  # characters kept from a tool's output (head + tail)
HEAD_SHARE = 1 / 3  # the end of an output (errors, summaries) matters more than its start

_ESCAPES = re.compile(
    r"""
      \x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?     # OSC (titles, hyperlinks, cwd), BEL or ST
    | \x1b[P^_X][^\x1b]*(?:\x1b\\)?         # DCS, PM, APC, SOS strings
    | \x1b\[[0-?]*[ -/]*[@-~]               # CSI: colours, cursor moves, erases
    | \x9b[0-?]*[ -/]*[@-~]                 # 8-bit CSI
    | \x1b[ -/]*[0-~]                       # two-byte escapes: ESC 7, ESC ( B, ESC =
    | \x1b                                  # a stray ESC
    """,
    re.VERBOSE,
)
# C0 controls other than TAB, LF, CR and BS (handled below), and DEL.
_CONTROLS = re.compile(r"[\x00-\x07\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]")
_BACKSPACE = re.compile(r"[^\n\x08]\x08")
_CR_LINE = re.compile(r"[^\n]*\r[^\n]*")


@dataclass(frozen=True)
class CleanOutput:
    text: str
    cut_chars: int = 0
    cut_lines: int = 0

    @property
    def truncated(self) -> bool:
        return self.cut_chars > 0


def strip_escapes(text: str) -> str:
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


def _overwrite(match: re.Match[str]) -> str:
    """One line with CRs, as a terminal leaves it: each CR returns to column 0 and the
    following text overwrites what was there."""
    segments = match.group(0).split("\r")
    line = segments[0]
    for segment in segments[1:]:
        line = segment + line[len(segment) :]
    return line


def resolve_overwrites(text: str) -> str:
    text = text.replace("\r\n", "\n")
    if "\r" in text:
        text = _CR_LINE.sub(_overwrite, text)
    if "\x08" in text:
        # Overstrike (man pages, `_\bX`) and erase: a backspace removes the character before.
        previous = None
        while previous != text:
            previous, text = text, _BACKSPACE.sub("", text)
        text = text.replace("\x08", "")
    return text


def truncate(text: str, budget: int = OUTPUT_BUDGET) -> CleanOutput:
    """Keep about `budget` characters: a head and a longer tail, cut at line boundaries,
    joined by one line that says how much was left out."""
    if len(text) <= budget:
        return CleanOutput(text)
    head_end = int(budget * HEAD_SHARE)
    tail_start = len(text) - (budget - head_end)
    # Snap to whole lines when a line end is near, so no line is shown half.
    newline = text.rfind("\n", 0, head_end)
    if newline > head_end // 2:
        head_end = newline + 1
    newline = text.find("\n", tail_start, tail_start + (budget - head_end) // 2)
    if newline >= 0:
        tail_start = newline + 1
    cut = text[head_end:tail_start]
    cut_lines = cut.count("\n")
    marker = f"[... {len(cut)} characters ({cut_lines} lines) cut from the middle ...]\n"
    head = text[:head_end]
    if head and not head.endswith("\n"):
        marker = "\n" + marker
    return CleanOutput(head + marker + text[tail_start:], len(cut), cut_lines)


def clean_output(raw: str | bytes, budget: int = OUTPUT_BUDGET) -> CleanOutput:
    """Bytes or text from a terminal to what a model should read."""
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
    return truncate(resolve_overwrites(strip_escapes(text)), budget)
