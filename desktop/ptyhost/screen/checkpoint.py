"""Checkpoints: bytes that rebuild a TerminalScreen on an empty terminal of the same size."""

from __future__ import annotations

import itertools
from functools import lru_cache

from pyte import graphics as g
from pyte import modes as mo
from pyte.screens import Char, wcwidth

from desktop.ptyhost.screen.reference import DEFAULT_MODES, Buffer, SavedCursor, TerminalScreen

# Any double-width character: drawn to create a placeholder cell, then replaced or shifted.
WIDE_PLACEHOLDER = "\u4e00"
# Private modes that would do something else when replayed (they never reach the mode set
# as private modes, but a non-private mode can have the same number).
_NOT_REPLAYABLE_AS_PRIVATE = frozenset({3, 47, 1047, 1048, 1049})

_FG = {name: str(code) for code, name in itertools.chain(g.FG_ANSI.items(), g.FG_AIXTERM.items())}
_BG = {name: str(code) for code, name in itertools.chain(g.BG_ANSI.items(), g.BG_AIXTERM.items())}
_PALETTE: dict[str, int] = {}
for _index, _hex in enumerate(g.FG_BG_256):
    _PALETTE.setdefault(_hex, _index)

_FLAGS = (
    ("bold", "1", "22"),
    ("italics", "3", "23"),
    ("underscore", "4", "24"),
    ("blink", "5", "25"),
    ("reverse", "7", "27"),
    ("strikethrough", "9", "29"),
)


@lru_cache(maxsize=1024)
def _colour(value: str, named: tuple[tuple[str, str], ...], extended: str) -> str | None:
    """SGR parameters that make pyte store `value` as a colour, or None if none can."""
    codes = dict(named)
    if value in codes:
        return codes[value]
    if value in _PALETTE:
        return f"{extended};5;{_PALETTE[value]}"
    # pyte stores 24-bit colours as "{:02x}" * 3 (each part up to 9999 after clamping).
    for i in range(2, 5):
        for j in range(i + 2, i + 5):
            parts = (value[:i], value[i:j], value[j:])
            try:
                numbers = [int(part, 16) for part in parts]
            except ValueError:
                return None
            if all(f"{n:02x}" == p and n <= 9999 for n, p in zip(numbers, parts, strict=True)):
                return f"{extended};2;{numbers[0]};{numbers[1]};{numbers[2]}"
    return None


_FG_NAMED = tuple(_FG.items())
_BG_NAMED = tuple(_BG.items())


def _attribute_params(target: Char, reference: Char) -> list[str]:
    """SGR parameters turning `reference`'s attributes into `target`'s."""
    params = []
    if target.fg != reference.fg:
        code = _colour(target.fg, _FG_NAMED, "38")
        if code is not None:
            params.append(code)
    if target.bg != reference.bg:
        code = _colour(target.bg, _BG_NAMED, "48")
        if code is not None:
            params.append(code)
    for name, on, off in _FLAGS:
        wanted = getattr(target, name)
        if wanted != getattr(reference, name):
            params.append(on if wanted else off)
    return params


def sgr(pen: Char, target: Char, blank: Char) -> str:
    """The shortest SGR sequence from attributes `pen` to `target` (SGR 0 gives `blank`)."""
    if pen[1:] == target[1:]:
        return ""
    relative = _attribute_params(target, pen)
    absolute = ["0", *_attribute_params(target, blank)]
    best = relative if len(";".join(relative)) <= len(";".join(absolute)) else absolute
    return "\x1b[" + ";".join(best) + "m"


def _width(data: str) -> int:
    """Columns a cell's text occupies when drawn: its first character decides."""
    return max(wcwidth(data[0]), 0) if data else 0


class _Writer:
    """Emits sequences while tracking what the receiving terminal's cursor and pen are."""

    def __init__(self, columns: int, blank: Char) -> None:
        self.columns = columns
        self.blank = blank
        self.out: list[str] = []
        self.pen = blank
        self.x: int | None = 0
        self.y: int | None = 0

    def emit(self, text: str) -> None:
        self.out.append(text)

    def lost_cursor(self) -> None:
        self.x = self.y = None

    def goto(self, x: int, y: int) -> None:
        if (self.x, self.y) == (x, y):
            return
        if self.y == y and self.x is not None:
            self.out.append(f"\x1b[{x + 1}G")
        else:
            self.out.append(f"\x1b[{y + 1};{x + 1}H" if x else f"\x1b[{y + 1}H")
        self.x, self.y = x, y

    def use(self, attrs: Char) -> None:
        self.out.append(sgr(self.pen, attrs, self.blank))
        self.pen = attrs

    def draw(self, text: str, width: int) -> None:
        self.out.append(text)
        assert self.x is not None
        self.x = min(self.x + width, self.columns)

    # ----- rows ----------------------------------------------------------------------------

    def row(self, y: int, target: list[Char]) -> None:
        """Draw one row of an empty screen so that its cells become `target`."""
        columns = self.columns
        current = [self.blank] * columns
        for x in range(columns):
            cell = target[x]
            if current[x] == cell:
                continue
            width = _width(cell.data)
            if width == 1:
                self._put(x, y, cell, current)
            elif width == 2:
                self._wide(x, y, cell, current)
            elif self._join(x, y, cell, current):
                pass
            elif x + 1 < columns:
                self._lone_placeholder(x, y, cell, current)
            else:
                self._last_column_placeholder(x, y, target, current)

    def _put(self, x: int, y: int, cell: Char, current: list[Char]) -> None:
        """Draw a single-width cell at (x, y)."""
        self.goto(x, y)
        self.use(cell)
        self.draw(cell.data, 1)
        current[x] = cell

    def _placeholder_ending_at(self, x: int, y: int, cell: Char, current: list[Char]) -> None:
        """A wide character over columns x - 1 and x, leaving `cell` (a placeholder with its
        marks) at x; what it wrote at x - 1 is drawn over next."""
        self.goto(x - 1, y)
        self.use(cell)
        self.draw(WIDE_PLACEHOLDER, 2)
        if cell.data:
            self.draw(cell.data, 0)
        current[x] = cell

    def _wide(self, x: int, y: int, cell: Char, current: list[Char]) -> None:
        self.goto(x, y)
        self.use(cell)
        self.draw(cell.data[0], 2)
        current[x] = cell._replace(data=cell.data[0])
        if x + 1 < self.columns:
            current[x + 1] = cell._replace(data="")
        marks = cell.data[1:]
        if marks:
            # Zero-width characters join the cell left of the cursor: put the cursor after
            # the wide character's first half.
            if x + 1 < self.columns:
                self.goto(x + 1, y)
            self.draw(marks, 0)
            current[x] = cell

    def _join(self, x: int, y: int, cell: Char, current: list[Char]) -> bool:
        """Add the zero-width characters a placeholder holds to the one a wide character
        just left there (they join the cell left of the cursor)."""
        have = current[x]
        if have[1:] != cell[1:] or not cell.data.startswith(have.data):
            return False
        if x + 1 < self.columns:
            self.goto(x + 1, y)
        elif (self.x, self.y) != (self.columns, y):
            return False
        self.draw(cell.data[len(have.data) :], 0)
        current[x] = cell
        return True

    def _lone_placeholder(self, x: int, y: int, cell: Char, current: list[Char]) -> None:
        """A placeholder cell (maybe with joined marks) not preceded by its wide character."""
        self.goto(x, y)
        self.use(cell)
        self.draw(WIDE_PLACEHOLDER, 2)
        if cell.data:
            self.draw(cell.data, 0)  # joins the placeholder at x + 1
        self.goto(x, y)
        self.emit("\x1b[P")  # DCH: the placeholder moves to x, the rest of the row follows
        del current[x]
        current[x] = cell
        current.append(self.blank)

    def _last_column_placeholder(
        self, x: int, y: int, target: list[Char], current: list[Char]
    ) -> None:
        """A placeholder in the last column: draw a wide character over the last two cells,
        then redraw the cells to its left from right to left without touching the right."""
        cell = target[x]
        if x == 0:
            return  # a one-column screen cannot hold one
        self._placeholder_ending_at(x, y, cell, current)
        column = x - 1
        while column >= 0:
            left = target[column]
            width = _width(left.data)
            if width == 1:
                self._put(column, y, left, current)
                return
            if width == 2:
                # Redrawing it rewrites the placeholder after it: fine only if that one is its
                # own (the marks it holds join again). No draws leave other pairs, nor pyte.
                follower = target[column + 1]
                if follower[1:] != left[1:] or _width(follower.data) or len(left.data) > 1:
                    return
                self.goto(column, y)
                self.use(left)
                self.draw(left.data, 2)
                if follower.data:
                    self.draw(follower.data, 0)
                current[column] = left
                return
            if column == 0:
                return
            self._placeholder_ending_at(column, y, left, current)
            column -= 1

    def buffer(self, buffer: Buffer, lines: int) -> None:
        columns = self.columns
        for y in range(lines):
            line = buffer.get(y)
            if line is None or (not line and line.default == self.blank):
                continue
            self.row(y, [line[x] for x in range(columns)])

    def saved_cursor(self, saved: SavedCursor) -> None:
        if saved.origin:
            self.emit("\x1b[?6h")  # no scroll region yet: positions stay absolute
            self.x, self.y = 0, 0
        self.goto(saved.x, saved.y)
        self.use(saved.attrs)
        self.emit("\x1b7")
        if saved.origin:
            self.emit("\x1b[?6l")
            self.x, self.y = 0, 0


def _mode_sequence(mode: int, enable: bool) -> str:
    suffix = "h" if enable else "l"
    if mode >= 32 and mode % 32 == 0 and (mode >> 5) not in _NOT_REPLAYABLE_AS_PRIVATE:
        return f"\x1b[?{mode >> 5}{suffix}"
    return f"\x1b[{mode}{suffix}"


def _redraw_for_pending_wrap(writer: _Writer, screen: TerminalScreen) -> None:
    """Leave the cursor after the last column, where pyte keeps it after drawing there."""
    columns = screen.columns
    y = screen.cursor.y
    line = screen.buffer.get(y)
    row = [line[x] if line is not None else writer.blank for x in range(columns)]
    last = row[-1]
    if _width(last.data) > 0:
        writer.goto(columns - 1, y)
        writer.use(last)
        writer.draw(last.data, _width(last.data))
    elif columns >= 2:
        wide = row[-2]
        if _width(wide.data) == 2 and len(wide.data) == 1 and last[1:] == wide[1:]:
            writer.goto(columns - 2, y)
            writer.use(wide)
            writer.draw(wide.data, 2)
            if last.data:
                writer.draw(last.data, 0)


def checkpoint(screen: TerminalScreen) -> bytes:
    """Bytes that, written to an empty terminal of the screen's size, reproduce its state."""
    reverse_screen = mo.DECSCNM in screen.mode
    blank = Char(" ", reverse=reverse_screen)
    writer = _Writer(screen.columns, blank)
    writer.emit("\x1bc")
    if reverse_screen:
        writer.emit("\x1b[?5h")  # also turns on reverse in the pen, which `blank` has

    main = screen.main_buffer if screen.main_buffer is not None else screen.buffer
    writer.buffer(main, screen.lines)
    if screen.main_buffer is None:
        if screen.saved_main is not None:
            writer.saved_cursor(screen.saved_main)
    else:
        if screen.saved_main is not None:
            saved = screen.saved_main
            if saved.origin:
                writer.emit("\x1b[?6h")
                writer.x, writer.y = 0, 0
            writer.goto(saved.x, saved.y)
            writer.use(saved.attrs)
            writer.emit("\x1b[?1049h")  # saves the cursor (as DECSC), then switches
            if saved.origin:
                writer.emit("\x1b[?6l")
                writer.x, writer.y = 0, 0
        else:
            writer.emit("\x1b[?47h")
        writer.buffer(screen.buffer, screen.lines)
        if screen.saved_alt is not None:
            writer.saved_cursor(screen.saved_alt)

    if screen.title and screen.title == screen.icon_name:
        writer.emit(f"\x1b]0;{screen.title}\x07")
    else:
        if screen.icon_name:
            writer.emit(f"\x1b]1;{screen.icon_name}\x07")
        if screen.title:
            writer.emit(f"\x1b]2;{screen.title}\x07")

    if screen.tabstops != set(range(8, screen.columns, 8)):
        writer.emit("\x1b[3g")
        for stop in sorted(screen.tabstops):
            writer.goto(stop, 0)
            writer.emit("\x1bH")
    if screen.margins is not None:
        top, bottom = screen.margins
        writer.emit(f"\x1b[{top + 1};{bottom + 1}r")
        writer.lost_cursor()
    for mode in sorted(screen.mode - DEFAULT_MODES - {mo.DECSCNM, mo.IRM}):
        writer.emit(_mode_sequence(mode, True))
        writer.lost_cursor()
    for mode in sorted(DEFAULT_MODES - screen.mode):
        writer.emit(_mode_sequence(mode, False))
    if screen.application_keypad:
        writer.emit("\x1b=")

    cursor = screen.cursor
    x = min(cursor.x, screen.columns - 1)
    if mo.DECOM in screen.mode and screen.margins is not None:
        writer.emit(f"\x1b[{cursor.y - screen.margins.top + 1};{x + 1}H")
        writer.x, writer.y = x, cursor.y
    else:
        writer.goto(x, cursor.y)
    if cursor.x >= screen.columns:
        _redraw_for_pending_wrap(writer, screen)
    if mo.IRM in screen.mode:
        writer.emit(_mode_sequence(mo.IRM, True))
    writer.use(cursor.attrs)
    return "".join(writer.out).encode("utf-8", "replace")
