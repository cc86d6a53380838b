"""The terminal semantics of the screen model: pyte's Screen and ByteStream, completed and
fixed; the reference every other part must agree with (what differs from pyte, and why:
docs/pty-host.md, "The reference screen")."""

from __future__ import annotations

import unicodedata
from collections import defaultdict
from typing import Any, NamedTuple

import pyte
from pyte import modes as mo
from pyte.screens import Char, StaticDefaultDict, wcwidth

Line = StaticDefaultDict[int, Char]
Buffer = dict[int, Line]

ALT_SCREEN_MODES = frozenset({47, 1047, 1049})
SAVE_CURSOR_MODE = 1048
IGNORED_PRIVATE_MODES = frozenset({3})  # DECCOLM
# Modes a fresh screen starts with (pyte's _DEFAULT_MODE).
DEFAULT_MODES = frozenset({mo.DECAWM, mo.DECTCEM})


class SavedCursor(NamedTuple):
    """What DECSC keeps: position, attributes and origin mode."""

    x: int
    y: int
    attrs: Char
    origin: bool


def new_buffer(screen: pyte.Screen) -> Buffer:
    """An empty buffer whose lines are made on first use, as pyte's."""
    return defaultdict(lambda: StaticDefaultDict[int, Char](screen.default_char))


def printable_title(text: str) -> str:
    """A title without control characters, so a checkpoint can carry it in an OSC."""
    return "".join(c for c in text if c >= " " and not "\x7f" <= c <= "\x9f")


class TerminalScreen(pyte.Screen):
    """pyte's Screen with an alternate screen, xterm-like saved cursors and the fixes above."""

    def __init__(self, columns: int, lines: int) -> None:
        self.main_buffer: Buffer | None = None  # the main screen while the alternate is shown
        self.saved_main: SavedCursor | None = None
        self.saved_alt: SavedCursor | None = None
        self.application_keypad = False  # DECKPAM (ESC =), which clients need to know
        super().__init__(columns, lines)

    # ----- state ---------------------------------------------------------------------------

    @property
    def in_alternate_screen(self) -> bool:
        return self.main_buffer is not None

    def reset(self) -> None:
        self.main_buffer = None
        self.saved_main = None
        self.saved_alt = None
        self.application_keypad = False
        super().reset()

    def set_application_keypad(self) -> None:
        self.application_keypad = True

    def reset_application_keypad(self) -> None:
        self.application_keypad = False

    # ----- modes ---------------------------------------------------------------------------

    def set_mode(self, *modes: int, **kwargs: Any) -> None:
        if kwargs.get("private"):
            modes = self._take_special_modes(modes, enable=True)
        super().set_mode(*modes, **kwargs)

    def reset_mode(self, *modes: int, **kwargs: Any) -> None:
        if kwargs.get("private"):
            modes = self._take_special_modes(modes, enable=False)
        super().reset_mode(*modes, **kwargs)

    def _take_special_modes(self, modes: tuple[int, ...], enable: bool) -> tuple[int, ...]:
        """Act on the private modes pyte does not know; return the others."""
        rest = []
        for mode in modes:
            if mode in ALT_SCREEN_MODES:
                if enable:
                    self.enter_alternate_screen(save_cursor=mode == 1049)
                else:
                    self.leave_alternate_screen(restore_cursor=mode == 1049)
            elif mode == SAVE_CURSOR_MODE:
                if enable:
                    self.save_cursor()
                else:
                    self.restore_cursor()
            elif mode not in IGNORED_PRIVATE_MODES:
                rest.append(mode)
        return tuple(rest)

    def enter_alternate_screen(self, save_cursor: bool) -> None:
        if self.main_buffer is not None:
            return
        if save_cursor:
            self.save_cursor()
        self.main_buffer = self.buffer
        self.buffer = new_buffer(self)
        self.saved_alt = None
        self.dirty.update(range(self.lines))

    def leave_alternate_screen(self, restore_cursor: bool) -> None:
        if self.main_buffer is None:
            # As xterm and xterm.js do: ?1049l restores the cursor even on the main screen.
            if restore_cursor:
                self.restore_cursor()
            return
        self.buffer = self.main_buffer
        self.main_buffer = None
        self.saved_alt = None
        self.dirty.update(range(self.lines))
        if restore_cursor:
            self.restore_cursor()

    # ----- saved cursor --------------------------------------------------------------------

    def save_cursor(self) -> None:
        saved = SavedCursor(
            min(self.cursor.x, self.columns - 1),
            self.cursor.y,
            self.cursor.attrs,
            mo.DECOM in self.mode,
        )
        if self.main_buffer is None:
            self.saved_main = saved
        else:
            self.saved_alt = saved

    def restore_cursor(self) -> None:
        saved = self.saved_main if self.main_buffer is None else self.saved_alt
        if saved is None:
            self.reset_mode(mo.DECOM)
            self.cursor_position()
            return
        if saved.origin:
            self.set_mode(mo.DECOM)
        else:
            self.reset_mode(mo.DECOM)
        self.cursor.x, self.cursor.y, self.cursor.attrs = saved.x, saved.y, saved.attrs
        self.ensure_hbounds()
        self.ensure_vbounds(use_margins=True)

    # ----- drawing -------------------------------------------------------------------------

    def draw(self, data: str) -> None:
        columns = self.columns
        cursor = self.cursor
        for char in data:
            width = wcwidth(char)
            if width < 0:
                continue  # unprintable: ignored, like the terminals our clients use
            if width == 0:
                self.combine(char)
                continue
            if cursor.x == columns:
                if mo.DECAWM in self.mode:
                    self.dirty.add(cursor.y)
                    self.carriage_return()
                    self.linefeed()
                else:
                    cursor.x = max(cursor.x - width, 0)
            if mo.IRM in self.mode:
                self.insert_characters(width)
            line = self.buffer[cursor.y]
            line[cursor.x] = cursor.attrs._replace(data=char)
            if width == 2 and cursor.x + 1 < columns:
                line[cursor.x + 1] = cursor.attrs._replace(data="")
            cursor.x = min(cursor.x + width, columns)
        self.dirty.add(cursor.y)

    def combine(self, char: str) -> None:
        """Attach a zero-width character to the cell before the cursor."""
        x, y = self.cursor.x, self.cursor.y
        if x:
            line, column = self.buffer[y], x - 1
        elif y:
            line, column = self.buffer[y - 1], self.columns - 1
        else:
            return
        last = line[column]
        line[column] = last._replace(data=unicodedata.normalize("NFC", last.data + char))

    def insert_characters(self, count: int | None = None) -> None:
        super().insert_characters(count)
        line = self.buffer[self.cursor.y]
        for x in [x for x in line if x >= self.columns]:
            del line[x]

    def erase_in_line(self, how: int = 0, private: bool = False) -> None:
        if how == 1 and self.cursor.x >= self.columns:
            self.cursor.x -= 1  # EL 1 in the pending-wrap position: stop at the last column
            try:
                super().erase_in_line(how, private)
            finally:
                self.cursor.x += 1
            return
        super().erase_in_line(how, private)

    def set_tab_stop(self) -> None:
        self.tabstops.add(min(self.cursor.x, self.columns - 1))

    def set_title(self, param: str) -> None:
        super().set_title(printable_title(param))

    def set_icon_name(self, param: str) -> None:
        super().set_icon_name(printable_title(param))

    # ----- resize --------------------------------------------------------------------------

    def resize(self, lines: int | None = None, columns: int | None = None) -> None:
        lines = lines or self.lines
        columns = columns or self.columns
        if (lines, columns) == (self.lines, self.columns):
            return
        drop_top = max(0, self.cursor.y - (lines - 1))
        buffers = [self.buffer] if self.main_buffer is None else [self.buffer, self.main_buffer]
        for buffer in buffers:
            kept = {
                y - drop_top: line for y, line in buffer.items() if drop_top <= y < drop_top + lines
            }
            buffer.clear()
            buffer.update(kept)
            if columns < self.columns:
                for line in buffer.values():
                    for x in [x for x in line if x >= columns]:
                        del line[x]
        self.cursor.y -= drop_top
        if columns < self.columns:
            self.cursor.x = min(self.cursor.x, columns - 1)
        self.saved_main = _fit_saved(self.saved_main, drop_top, lines, columns)
        self.saved_alt = _fit_saved(self.saved_alt, drop_top, lines, columns)
        old_columns = self.columns
        self.tabstops = {t for t in self.tabstops if t < columns}
        self.tabstops.update(t for t in range(8, columns, 8) if t >= old_columns)
        self.lines, self.columns = lines, columns
        self.margins = None
        self.dirty.update(range(lines))


def _fit_saved(
    saved: SavedCursor | None, drop_top: int, lines: int, columns: int
) -> SavedCursor | None:
    if saved is None:
        return None
    return saved._replace(x=min(saved.x, columns - 1), y=min(max(saved.y - drop_top, 0), lines - 1))


_EXECUTED_IN_CSI = frozenset("\x07\x08\x09\x0a\x0b\x0c\x0d")


class TerminalStream(pyte.ByteStream):
    """pyte's ByteStream, always UTF-8, that drops a sequence whose handler fails, and keeps
    the text of an unfinished sequence (for checkpoints followed by more output)."""

    listener: TerminalScreen
    escape = {
        **pyte.Stream.escape,
        "=": "set_application_keypad",
        ">": "reset_application_keypad",
    }

    def __init__(self, screen: TerminalScreen) -> None:
        self._partial: list[str] = []  # the sequence being parsed, minus executed controls
        super().__init__(screen)

    def pending_sequence(self) -> bytes:
        """Bytes that put a fresh parser where this one is: the unfinished sequence and
        the incomplete UTF-8 character."""
        return "".join(self._partial).encode("utf-8") + self.utf8_decoder.getstate()[0]

    def select_other_charset(self, code: str) -> None:
        """Output stays UTF-8 (ESC % @ would switch pyte to Latin-1)."""

    def feed(self, data: bytes) -> None:  # type: ignore[override]
        self.feed_text(self.utf8_decoder.decode(data))

    @property
    def at_ground(self) -> bool:
        """True between sequences, with no partial UTF-8 character waiting."""
        return bool(self._taking_plain_text) and self.utf8_decoder.getstate()[0] == b""

    def feed_text(self, data: str) -> None:
        """pyte's Stream.feed, except that a failing handler costs only its own sequence."""
        draw = self.listener.draw
        match_text = self._text_pattern.match
        taking_plain_text = self._taking_plain_text
        length = len(data)
        offset = 0
        while offset < length:
            if taking_plain_text:
                match = match_text(data, offset)
                if match:
                    start, offset = match.span()
                    draw(data[start:offset])
                else:
                    taking_plain_text = False
            else:
                taking_plain_text = self._send_char(data[offset])
                offset += 1
        self._taking_plain_text = taking_plain_text

    def _send_char(self, char: str) -> bool:
        """Advance the parser by one character; True when it is back between sequences."""
        partial = self._partial
        in_csi = partial[:1] == ["\x9b"] or partial[:2] == ["\x1b", "["]
        # Controls inside a CSI run at once (pyte's behaviour): replaying them would repeat them.
        if not (in_csi and char in _EXECUTED_IN_CSI):
            partial.append(char)
        try:
            ground = bool(self._send_to_parser(char))
        except Exception:
            ground = True  # the parser was re-initialised: the sequence is dropped
        if ground:
            partial.clear()
        return ground
