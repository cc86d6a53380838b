"""Shell output cleaning: escapes stripped, CR overwrites resolved, head+tail truncation."""

from __future__ import annotations

import os
import select

from desktop.config import user_environment
from desktop.native import spawn
from desktop.tools.output import OUTPUT_BUDGET, clean_output, resolve_overwrites, strip_escapes
from tests.support.wait import wait_until


def test_colours_cursor_moves_and_titles_are_removed() -> None:
    raw = "\x1b[1;31merror\x1b[0m: \x1b]0;my title\x07bad\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\n"
    assert strip_escapes(raw) == "error: badlink\n"
    assert strip_escapes("\x1b(B\x1b=\x1b7a\x1b8\x1b[2K\x1b[?25lb\x1b[10;20Hc") == "abc"


def test_other_control_characters_go_but_tabs_and_newlines_stay() -> None:
    assert strip_escapes("a\x07b\x00c\td\ne\x7f") == "abc\td\ne"


def test_progress_redrawn_with_cr_leaves_only_its_final_state() -> None:
    assert resolve_overwrites("0%\r50%\r100%\ndone\n") == "100%\ndone\n"


def test_a_shorter_overwrite_keeps_the_tail_of_the_longer_line_like_a_terminal() -> None:
    assert resolve_overwrites("abcdef\rXY") == "XYcdef"


def test_crlf_is_a_plain_line_end_not_an_overwrite() -> None:
    assert resolve_overwrites("one\r\ntwo\r\n") == "one\ntwo\n"


def test_backspace_overstrike_is_resolved() -> None:
    assert resolve_overwrites("_\bH_\bi man\n") == "Hi man\n"
    assert resolve_overwrites("abc\b\bX") == "aX"


def test_output_under_the_budget_is_kept_whole() -> None:
    result = clean_output("x" * 100)
    assert result.text == "x" * 100
    assert not result.truncated


def test_long_output_keeps_head_and_tail_and_says_what_was_cut() -> None:
    text = "".join(f"line {i}\n" for i in range(50_000))
    result = clean_output(text)
    assert result.truncated
    assert len(result.text) < OUTPUT_BUDGET + 200
    assert result.text.startswith("line 0\nline 1\n")
    assert result.text.endswith("line 49999\n")
    marker = (
        f"[... {result.cut_chars} characters ({result.cut_lines} lines) cut from the middle ...]"
    )
    assert marker in result.text
    kept = [line for line in result.text.splitlines() if line.startswith("line ")]
    assert len(kept) + result.cut_lines == 50_000  # cut at line boundaries, nothing lost silently


def test_one_huge_line_is_cut_too() -> None:
    result = clean_output("y" * 100_000, budget=1000)
    assert result.truncated
    assert len(result.text) < 1100
    assert result.cut_chars == 99_000


def test_real_terminal_output_of_a_colourful_progress_command_reads_cleanly() -> None:
    script = (
        "printf '\\033[32mok\\033[0m start\\n'; "
        "for i in 10 20 30; do printf '\\rprogress %s%%' $i; done; printf '\\n'; "
        "printf '\\033]0;title\\007done\\n'"
    )
    proc = spawn(["bash", "-c", script], env=user_environment(), cwd=os.getcwd(), cols=80, rows=24)
    output = bytearray()

    def ended() -> bool:
        ready, _, _ = select.select([proc.fd], [], [], 0.5)
        if ready:
            try:
                output.extend(proc.read())
            except EOFError:
                return True
        return False

    try:
        wait_until(ended, 10, interval=0, what=lambda: f"the end of the output; got {output!r}")
    finally:
        proc.close()
    assert b"\x1b[" in output
    assert b"\r" in output  # the raw bytes really had both
    assert clean_output(bytes(output)).text == "ok start\nprogress 30%\ndone\n"
