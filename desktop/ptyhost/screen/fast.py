"""Faster drawing and parsing (`FastScreen`, `FastStream`) with exactly TerminalScreen's and
TerminalStream's results.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pyte import control as ctrl
from pyte import modes as mo
from pyte.screens import Char

from desktop.ptyhost.screen.reference import TerminalScreen, TerminalStream

_ASCII_RUN = re.compile(r"[\x20-\x7e]+")
_CELL_CACHE_LIMIT = 512


class _Cells(dict[str, Char]):
    """Cells for one set of attributes, made on first use."""

    __slots__ = ("attrs",)

    def __init__(self, attrs: Char) -> None:
        super().__init__()
        self.attrs = attrs

    def __missing__(self, char: str) -> Char:
        cell = self.attrs._replace(data=char)
        self[char] = cell
        return cell


class FastScreen(TerminalScreen):
    def __init__(self, columns: int, lines: int) -> None:
        self._cells: dict[Char, _Cells] = {}
        super().__init__(columns, lines)

    def _cells_for(self, attrs: Char) -> _Cells:
        cells = self._cells.get(attrs)
        if cells is None:
            if len(self._cells) >= _CELL_CACHE_LIMIT:
                self._cells.clear()
            cells = self._cells[attrs] = _Cells(attrs)
        return cells

    def draw(self, data: str) -> None:
        if mo.IRM in self.mode:
            super().draw(data)
            return
        position = 0
        for run in _ASCII_RUN.finditer(data):
            start, end = run.span()
            if start > position:
                super().draw(data[position:start])
            self._draw_ascii(data, start, end)
            position = end
        if position < len(data):
            super().draw(data[position:])

    def _draw_ascii(self, data: str, start: int, end: int) -> None:
        """Draw data[start:end], all single-width, as TerminalScreen.draw would."""
        cursor = self.cursor
        columns = self.columns
        get_cell = self._cells_for(cursor.attrs).__getitem__
        while start < end:
            if cursor.x >= columns:
                if mo.DECAWM in self.mode:
                    self.carriage_return()
                    self.linefeed()
                else:
                    # Each character replaces the last column's: the last one stays.
                    self.buffer[cursor.y][columns - 1] = get_cell(data[end - 1])
                    cursor.x = columns
                    return
            x = cursor.x
            count = min(columns - x, end - start)
            self.buffer[cursor.y].update(
                zip(range(x, x + count), map(get_cell, data[start : start + count]), strict=True)
            )
            cursor.x = x + count
            start += count

    def index(self) -> None:
        top, bottom = self.margins or (0, self.lines - 1)
        if self.cursor.y != bottom:
            self.cursor_down()
            return
        buffer = self.buffer
        # As pyte's loop: lines top+1..bottom move up (missing ones are created), bottom goes.
        moved = list(map(buffer.__getitem__, range(top + 1, bottom + 1)))
        buffer.update(zip(range(top, bottom), moved, strict=True))
        buffer.pop(bottom, None)


_ESC = ctrl.ESC
# Complete sequences as pyte's parser reads them from the ground state. Groups: CSI
# private mark, parameters, final; OSC palette code (ignored); OSC code, text; escape
# final; two-character escape introducer and final.
_SEQUENCE = re.compile(
    r"\x1b(?:"
    r"\[(\?)?([0-9;]*)([@-~])"
    r"|\](?:([RP])|([^RP])((?:[^\x1b\x07\x9c]|\x1b[^\\])*)(?:\x07|\x9c|\x1b\\))"
    r"|([^\[\]#%()])"
    r"|([#%()])(.)"
    r")",
    re.DOTALL,
)
_IGNORED_AT_GROUND = frozenset((ctrl.NUL, ctrl.DEL, ctrl.SO, ctrl.SI))


class FastStream(TerminalStream):
    def attach(self, screen: Any) -> None:
        super().attach(screen)

        def table(mapping: dict[str, str]) -> dict[str, Callable[..., None]]:
            return {key: getattr(screen, name) for key, name in mapping.items()}

        self._basic = table(
            {key: name for key, name in self.basic.items() if key not in (ctrl.SO, ctrl.SI)}
        )
        self._csi = table(self.csi)
        self._escape = table(self.escape)
        self._sharp = table(self.sharp)

    def feed_text(self, data: str) -> None:
        listener = self.listener
        draw = listener.draw
        debug = listener.debug
        basic = self._basic
        csi = self._csi
        escape = self._escape
        match_text = self._text_pattern.match
        match_sequence = _SEQUENCE.match
        ground = bool(self._taking_plain_text)
        length = len(data)
        offset = 0
        while offset < length:
            if not ground:
                ground = self._send_char(data[offset])
                offset += 1
                continue
            text = match_text(data, offset)
            if text is not None:
                end = text.end()
                draw(data[offset:end])
                offset = end
                continue
            char = data[offset]
            handler = basic.get(char)
            if handler is not None:
                handler()
                offset += 1
                continue
            if char in _IGNORED_AT_GROUND:
                offset += 1
                continue
            sequence = match_sequence(data, offset) if char == _ESC else None
            if sequence is None:
                ground = self._send_char(char)  # C1 introducers, cut or unusual sequences
                offset += 1
                continue
            offset = sequence.end()
            private, params, final, _palette, code, osc_text, single, intro, second = (
                sequence.groups()
            )
            try:
                if final is not None:
                    values = [min(int(p or 0), 9999) for p in params.split(";")]
                    if private:
                        csi.get(final, debug)(*values, private=True)
                    else:
                        csi.get(final, debug)(*values)
                elif code is not None:
                    osc_text = osc_text[1:]
                    if code in "01":
                        listener.set_icon_name(osc_text)
                    if code in "02":
                        listener.set_title(osc_text)
                elif single is not None:
                    escape.get(single, debug)()
                elif intro == "#":
                    self._sharp.get(second, debug)()
            except Exception:
                pass  # as the reference: a failing handler drops its sequence
        self._taking_plain_text = ground
