"""The bytes a revived shell starts with, read by a screen model as a page reads them: the old
rows, the marker and the new prompt below them, whether or not the old program had the
alternate screen open (issue 12, item 1)."""

from __future__ import annotations

from desktop.ptyhost import revive
from desktop.ptyhost.screen import ScreenModel


def _saved(checkpoint: bytes, cols: int, rows: int) -> revive.SavedTerminal:
    return revive.SavedTerminal(
        id="pty_test",
        command="bash",
        args=[],
        cwd="/var",
        title=None,
        osc_title=None,
        group=None,
        cols=cols,
        rows=rows,
        created=0,
        exit_code=None,
        was_running=True,
        checkpoint=checkpoint,
    )


def _revived_screen(old_output: bytes, cols: int = 40, rows: int = 8) -> list[str]:
    old = ScreenModel(cols, rows)
    old.feed(old_output)
    prefix = revive.restored_prefix(_saved(old.checkpoint(False), cols, rows))
    new = ScreenModel(cols, rows)
    new.feed(prefix + b"$ pwd\r\n/var\r\n$ ")
    lines, _ = new.snapshot()
    return [line.rstrip() for line in lines]


def test_revived_shell_writes_its_prompt_below_the_old_rows_not_over_them() -> None:
    rows = b"".join(b"row-%d\r\n" % n for n in range(1, 11)) + b"$ "
    lines = _revived_screen(rows)
    marker = next(i for i, line in enumerate(lines) if "restored" in line)
    assert lines[:marker] == ["row-8", "row-9", "row-10", "$"]
    assert lines[marker + 1 :] == ["$ pwd", "/var", "$"]
    assert not any(line.startswith("/var") and line != "/var" for line in lines)


def test_revived_shell_leaves_the_old_programs_alternate_screen_for_the_main_rows() -> None:
    main = b"main-1\r\nmain-2\r\n$ vim"
    alternate = b"\x1b[?1049h\x1b[H\x1b[2Jvim screen\x1b[5;3H"
    lines = _revived_screen(main + alternate)
    assert "vim screen" not in lines
    marker = next(i for i, line in enumerate(lines) if "restored" in line)
    assert lines[:marker] == ["main-1", "main-2", "$ vim"]
    assert lines[marker + 1 : marker + 4] == ["$ pwd", "/var", "$"]


def test_leaving_the_alternate_screen_on_the_main_screen_restores_the_cursor_like_xterm() -> None:
    # xterm.js restores the saved cursor for ?1049l even outside the alternate screen; the
    # model must do the same or the page and the snapshot route disagree.
    model = ScreenModel(10, 4)
    model.feed(b"ab\x1b7\r\ncd\r\nef\x1b[?1049lX")
    lines, cursor = model.snapshot()
    assert [line.rstrip() for line in lines] == ["abX", "cd", "ef", ""]
    assert cursor == (3, 0)
