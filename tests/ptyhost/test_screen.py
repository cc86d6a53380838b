"""The screen model: checkpoints are exact against a reference fed every byte, skipping
happens when (and only when) it is safe, and feeding is safe from another thread."""

from __future__ import annotations

import random
import threading
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop.ptyhost.screen import model as screen_module
from desktop.ptyhost.screen.model import COMPACT_MIN, ScreenModel
from desktop.ptyhost.screen.reference import TerminalScreen, TerminalStream
from desktop.ptyhost.screen.skip import run_keep
from tests.support.screen_corpus import (
    Capture,
    Event,
    Reference,
    Resize,
    diff,
    full_screen_redraws,
    long_line,
    numbered_lines,
    replay,
    run,
    state,
)

# ----- helpers -----------------------------------------------------------------------------


def assert_exact(model: ScreenModel, reference: Reference) -> bytes:
    """The model's checkpoint, replayed on a fresh reference screen, equals the reference."""
    checkpoint = model.checkpoint()
    whole = model.checkpoint(include_partial=False)
    whole.decode("utf-8")  # well-formed
    assert checkpoint.startswith(whole)
    cols, rows = reference.screen.columns, reference.screen.lines
    assert model.size == (cols, rows)
    expected = state(reference.screen)
    actual = state(replay(checkpoint, cols, rows))
    assert expected == actual, diff(expected, actual) + f"\ncheckpoint: {checkpoint!r}"[:2000]
    lines, cursor = model.snapshot()
    cells = expected["cells"]
    assert isinstance(cells, list)
    assert lines == ["".join(cell.data for cell in row).rstrip() for row in cells]
    assert cursor == (min(reference.screen.cursor.x, cols - 1), reference.screen.cursor.y)
    assert model.in_alternate_screen == reference.screen.in_alternate_screen
    return checkpoint


def feed_in_chunks(
    model: ScreenModel, events: list[Event], rng: random.Random, max_chunk: int = 64
) -> None:
    """Feed with chunk boundaries anywhere, with catch-ups (some partial) in between."""
    for event in events:
        if isinstance(event, Resize):
            model.resize(event.cols, event.rows)
            continue
        at = 0
        while at < len(event):
            size = rng.randint(1, max_chunk)
            model.feed(event[at : at + size])
            at += size
            if rng.random() < 0.15:
                model.catch_up(rng.choice([None, 1, 5, 64]))


@contextmanager
def eager_skipping() -> Iterator[None]:
    """Skip (and parse through sequences) at tiny sizes, to exercise every path."""
    with (
        patch.object(screen_module, "COMPACT_MIN", 32),
        patch.object(screen_module, "MIN_SKIP", 1),
        patch.object(screen_module, "SEQUENCE_SLACK", 3),
        patch.object(screen_module, "IN_SEQUENCE_STEP", 1),
        patch.object(screen_module, "MAX_IN_SEQUENCE_STEP", 5),
        patch.object(screen_module, "MAX_PIECE", 7),
    ):
        yield


# ----- generated output --------------------------------------------------------------------

_number = st.one_of(st.integers(0, 30), st.sampled_from([0, 1, 255, 256, 9999, 12345]))
_params = st.lists(_number, max_size=4).map(lambda ps: ";".join(map(str, ps)))
_text = st.text(
    st.sampled_from(
        [
            *"abcxyz ABC019~.-",
            *["é", "ß", "Ω", "日", "本", "語", "😀", "🎉", "\u0301", "\u0308", "\u200d", "\ufe0f"],
            *["\u200b", "\x01", "\x85", "\x9b", "\u1100", "\u1161", "\uff21", "\xad"],
        ]
    ),
    min_size=1,
    max_size=24,
).map(lambda s: s.encode())
_sgr_param = st.one_of(
    st.sampled_from(
        [
            *["", "0", "00", "1", "22", "3", "23", "4", "24", "5", "25", "7", "27", "9", "29"],
            *["30", "31", "37", "39", "40", "44", "49", "90", "97", "100", "105", "107", "38;5"],
        ]
    ),
    st.integers(0, 300).map(lambda n: f"38;5;{n}"),
    st.integers(0, 300).map(lambda n: f"48;5;{n}"),
    st.tuples(st.integers(0, 300), st.integers(0, 255), st.integers(0, 9999)).map(
        lambda c: f"{st_choice(c)};2;{c[0]};{c[1]};{c[2]}"
    ),
)


def st_choice(colour: tuple[int, int, int]) -> str:
    return "38" if sum(colour) % 2 else "48"


_sgr = st.lists(_sgr_param, min_size=1, max_size=3).map(lambda ps: f"\x1b[{';'.join(ps)}m".encode())
_csi = st.tuples(st.sampled_from(list("ABCDEFGHJKLMPSTX@`dfgr")), _params).map(
    lambda t: f"\x1b[{t[1]}{t[0]}".encode()
)
_modes = st.tuples(
    st.sampled_from(
        [
            *["?1049", "?1047", "?47", "?1048", "?25", "?7", "4", "20", "?6", "?5"],
            *["?2004", "?1", "?3", "?1000", "224", "1504"],
        ]
    ),
    st.sampled_from("hl"),
).map(lambda t: f"\x1b[{t[0]}{t[1]}".encode())
_escapes = st.sampled_from(
    [
        *[b"\x1b7", b"\x1b8", b"\x1bD", b"\x1bM", b"\x1bE", b"\x1bc", b"\x1bH", b"\x1b#8"],
        *[b"\x1b=", b"\x1b>"],
        *[b"\x1b(0", b"\x1b%@", b"\x0e", b"\x0f", b"\x1b[?1;2m", b"\x1b[1;2;3K", b"\x1b[5;1n"],
        *[b"\x1b[3;5;7r", b"\x1b[\xc2\xb2m", b"\x1b[1:2m", b"\x1b[3$p", b"\x1b[1\x1810"],
    ]
)
_controls = st.sampled_from(
    [b"\r", b"\n", b"\r\n", b"\r\n", b"\t", b"\b", b"\x07", b"\x0b", b"\x0c", b"\x00", b"\x7f"]
)
_osc = st.tuples(
    st.sampled_from(["0", "1", "2", "P", "R", "7"]), st.text("ab \x1b\x07é", max_size=6)
)
_osc_bytes = _osc.map(lambda t: f"\x1b]{t[0]};{t[1]}\x07".encode())
_garbage = st.one_of(
    st.binary(max_size=6), st.sampled_from([b"\xc2\x9b2J", b"\xc2\x9d0;t\x07", b"\xe6\x97"])
)
_flood = st.tuples(st.integers(1, 40), st.booleans(), st.booleans()).map(
    lambda t: (
        numbered_lines(t[0] * 3, t[0], coloured=t[1])
        if not t[2]
        else b"".join(
            b"\xe6\x97\xa5 %d\t\x1b[2Kx\x1b[3G\x1b[1P\x1b[2@\x08\r\n" % i for i in range(t[0])
        )
    )
)
# Long lines without line feeds, which the model cuts when they are long enough.
_long_line = st.tuples(st.integers(1, 700), st.integers(0, 94)).map(lambda t: long_line(*t))
# Repeats weigh the common kinds of output more.
_token = st.one_of(
    *[_text] * 3,
    *[_sgr] * 2,
    *[_controls] * 2,
    *[_csi] * 2,
    _modes,
    _escapes,
    _osc_bytes,
    _garbage,
    _flood,
    _long_line,
)


@st.composite
def _events(draw: st.DrawFn, max_cols: int = 20, max_rows: int = 8) -> tuple[int, int, list[Event]]:
    cols = draw(st.integers(1, max_cols))
    rows = draw(st.integers(1, max_rows))
    events: list[Event] = []
    for item in draw(st.lists(st.one_of(_token, _token, _token, st.just(None)), max_size=60)):
        if item is None:
            events.append(Resize(draw(st.integers(1, max_cols)), draw(st.integers(1, max_rows))))
        else:
            events.append(item)
    return cols, rows, events


_property_settings = settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@_property_settings
@given(_events(), st.randoms(use_true_random=False))
def test_checkpoint_is_exact_for_generated_output(
    case: tuple[int, int, list[Event]], rng: random.Random
) -> None:
    cols, rows, events = case
    model = ScreenModel(cols, rows)
    feed_in_chunks(model, events, rng)
    assert_exact(model, Reference(cols, rows).apply(events))


@_property_settings
@given(_events(), st.randoms(use_true_random=False))
def test_checkpoint_is_exact_with_eager_skipping(
    case: tuple[int, int, list[Event]], rng: random.Random
) -> None:
    cols, rows, events = case
    with eager_skipping():
        model = ScreenModel(cols, rows)
        feed_in_chunks(model, events, rng, max_chunk=200)
        assert_exact(model, Reference(cols, rows).apply(events))


@settings(max_examples=100, deadline=None)
@given(_events(), st.randoms(use_true_random=False))
def test_checkpoint_then_more_output_stays_exact(
    case: tuple[int, int, list[Event]], rng: random.Random
) -> None:
    """A client given a checkpoint and then live output sees what the reference shows:
    modes, scroll region, saved cursors and the screen under the alternate one carry over."""
    cols, rows, events = case
    split = rng.randint(0, len(events))
    model = ScreenModel(cols, rows)
    feed_in_chunks(model, events[:split], rng)
    reference = Reference(cols, rows).apply(events[:split])
    checkpoint = model.checkpoint()
    size = model.size
    client = Reference(*size).feed(checkpoint)
    rest = [*events[split:], b"\x1b[?1049l\x1b8abc\r\n\x1bM\x1b[4;1Hdef\n\n\n\n\n\n\n\n\n"]
    client.apply(rest)
    reference.apply(rest)
    expected, actual = state(reference.screen), state(client.screen)
    assert expected == actual, diff(expected, actual)


@settings(max_examples=100, deadline=None)
@given(_events(), st.randoms(use_true_random=False))
def test_reference_does_not_depend_on_how_output_is_split(
    case: tuple[int, int, list[Event]], rng: random.Random
) -> None:
    cols, rows, events = case
    whole = Reference(cols, rows).apply(events)
    pieces = Reference(cols, rows)
    for event in events:
        if isinstance(event, Resize):
            pieces.apply([event])
        else:
            at = 0
            while at < len(event):
                size = rng.randint(1, 3)
                pieces.feed(event[at : at + size])
                at += size
    assert state(whole.screen) == state(pieces.screen)


# ----- real programs -----------------------------------------------------------------------


def _check_recording(output: bytes, cols: int, rows: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    reference = Reference(cols, rows).feed(output)
    for max_chunk in (65536, 4096, 7):
        model = ScreenModel(cols, rows)
        feed_in_chunks(model, [output], rng, max_chunk=max_chunk)
        assert_exact(model, reference)


def test_ls_color_output_renders_exactly_like_the_reference(tmp_path: Path) -> None:
    for name in ["plain.txt", "script.sh", "archive.tar.gz", "dir", "link", "日本語.txt"]:
        (tmp_path / name).write_text("x")
    (tmp_path / "script.sh").chmod(0o755)
    (tmp_path / "dir").unlink()
    (tmp_path / "dir").mkdir()
    (tmp_path / "link").unlink()
    (tmp_path / "link").symlink_to("plain.txt")
    output = run(["ls", "--color=always", "-la", str(tmp_path), "/usr/bin"], cols=100, rows=30)
    assert b"\x1b[" in output
    _check_recording(output, 100, 30)


def test_a_hundred_thousand_scrolled_lines_render_exactly_like_the_reference() -> None:
    output = run(["seq", "1", "100000"], cols=80, rows=24)
    assert output.endswith(b"100000\r\n")
    _check_recording(output, 80, 24)


def test_git_log_graph_in_colour_renders_exactly_like_the_reference(tmp_path: Path) -> None:
    env = ["git", "-c", "user.name=T", "-c", "user.email=t@example.com", "-C", str(tmp_path)]
    run(["git", "init", "-q", str(tmp_path)])
    for i in range(30):
        (tmp_path / f"f{i}").write_text(f"{i}\n" * i)
        run([*env, "add", "."])
        run([*env, "commit", "-q", "-m", f"commit {i}: ünïcödé 日本"])
    output = run(
        [*env, "--no-pager", "log", "--color=always", "--graph", "--stat", "--decorate"],
        cols=90,
        rows=20,
    )
    assert b"\x1b[33mcommit" in output
    _check_recording(output, 90, 20)


def test_vim_on_the_alternate_screen_renders_exactly_at_every_step(tmp_path: Path) -> None:
    """vim: alternate screen, cursor addressing, colours, scroll regions; on exit the shell
    screen is back."""
    path = tmp_path / "example.py"
    path.write_text("".join(f"def f{i}(x):\n    return x * {i}  # 日本語 {i}\n" for i in range(80)))
    capture = Capture(
        ["vim", "-u", "NONE", "-i", "NONE", "-N", "-n", "+syntax on", "+set number", str(path)],
        80,
        24,
    )
    capture.wait_for(b"f11")
    checkpoints: list[bytes] = []
    # Each step ends with vim showing its cursor again; any prefix of the output is a fair
    # test input, so the exact point does not matter.
    for keys in [b"G", b"gg", b"\x06\x06", b"/return x \\* 3\r", b"ORE\x1b:redraw!\r"]:
        capture.send(keys)
        capture.wait_for(b"\x1b[?25h")
        checkpoints.append(bytes(capture.output))
    capture.send(b":q!\r")
    output = capture.finish()
    assert b"\x1b[?1049h" in output
    assert b"\x1b[?1049l" in output
    for partial in checkpoints:
        model = ScreenModel(80, 24)
        model.feed(partial)
        reference = Reference(80, 24).feed(partial)
        assert reference.screen.in_alternate_screen
        assert_exact(model, reference)
    _check_recording(b"shell prompt $ vim example.py\r\n" + output, 80, 24)


def test_less_paging_renders_exactly_like_the_reference(tmp_path: Path) -> None:
    path = tmp_path / "text.txt"
    path.write_text("".join(f"line {i} \x1b[31mred\x1b[0m end\n" for i in range(200)))
    capture = Capture(["less", "-R", str(path)], 60, 15)
    capture.wait_for(b"line 10")
    capture.send(b" ")
    capture.wait_for(b"line 2")
    middle = bytes(capture.output)
    capture.send(b"q")
    output = capture.finish()
    model = ScreenModel(60, 15)
    model.feed(middle)
    assert_exact(model, Reference(60, 15).feed(middle))
    _check_recording(output, 60, 15)


def test_vim_like_session_with_resizes() -> None:
    """Hand-made: prompt, full-screen program with scroll region and saved cursor, resizes
    in the middle (both buffers resized), exit back to the main screen."""
    events: list[Event] = [
        b"\x1b]0;user@host: ~\x07\x1b[01;32muser@host\x1b[00m:\x1b[01;34m~\x1b[00m$ vim\r\n",
        numbered_lines(0, 30),
        b"\x1b[?1049h\x1b[22;0;0t\x1b[?1h\x1b=\x1b[H\x1b[2J\x1b[1;20r\x1b[?25l",
        full_screen_redraws(2, 80, 24),
        Resize(60, 18),
        b"\x1b[5;1H\x1b[2L\x1b[38;2;10;20;30mINSERTED\x1b[m\x1b7\x1b[10;10H\x1b[M",
        Resize(100, 30),
        b"\x1b[1;10r\x1b[5;1H\n\n\n\n\n\n\n\n\x1bM\x1bM\x1b8X\x1b[?25h",
        b"\x1b[r\x1b[?1l\x1b>\x1b[?1049l",
        b"after vim\r\n",
    ]
    rng = random.Random(3)
    for cut in range(len(events) + 1):
        model = ScreenModel(80, 24)
        feed_in_chunks(model, events[:cut], rng, max_chunk=50)
        assert_exact(model, Reference(80, 24).apply(events[:cut]))


# ----- skipping ----------------------------------------------------------------------------


PROMPT = b"\x1b]0;user@host:~\x07\x1b[?2004h\x1b[01;32muser@host\x1b[00m$ \x1b[?2004l\r\r\n"


def test_flood_of_yes_is_skipped_and_checkpoint_matches_the_tail() -> None:
    """50 MB of `yes` output: after feeding, almost nothing is left to parse; the checkpoint
    equals a reference fed only the prompt and the last lines (all a screen can show)."""
    cols, rows = 80, 24
    model = ScreenModel(cols, rows)
    model.feed(PROMPT)
    model.catch_up()
    chunk = b"y\r\n" * (64 * 1024 // 3)
    total = 0
    while total < 50_000_000:
        model.feed(chunk)
        total += len(chunk)
    assert model.pending_bytes < 256 * 1024
    assert model.skipped_bytes > total - 256 * 1024
    tail = PROMPT + b"y\r\n" * (4 * rows)
    assert_exact(model, Reference(cols, rows).feed(tail))


def test_coloured_flood_is_skipped_and_exact() -> None:
    """ls/git-like coloured lines after a prompt with sequences that must be parsed:
    skipping happens (the prompt is parsed first) and the checkpoint is exact against the
    reference fed every byte."""
    cols, rows = 70, 20
    output = PROMPT + numbered_lines(0, 4000) + b"\x1b[1;33mbold tail " + "日本語".encode()
    model = ScreenModel(cols, rows)
    for at in range(0, len(output), 8192):
        model.feed(output[at : at + 8192])
    model.catch_up()
    assert model.skipped_bytes > len(output) * 0.9
    assert_exact(model, Reference(cols, rows).feed(output))


@pytest.mark.parametrize(
    "unsafe",
    [
        pytest.param(b"\x1b[A", id="cursor-up-in-the-flood"),
        pytest.param(b"\x1b]0;title\x07", id="osc-in-the-flood"),
    ],
)
def test_no_skipping_across_unsafe_sequences(unsafe: bytes) -> None:
    cols, rows = 40, 10
    lines = numbered_lines(0, 3000).split(b"\r\n")
    output = b"".join(
        line + b"\r\n" + (unsafe if i % 7 == 0 else b"") for i, line in enumerate(lines)
    )
    model = ScreenModel(cols, rows)
    for at in range(0, len(output), 4096):
        model.feed(output[at : at + 4096])
    assert model.skipped_bytes == 0
    assert model.pending_bytes == len(output)
    assert_exact(model, Reference(cols, rows).feed(output))


@pytest.mark.parametrize(
    "setup",
    [
        pytest.param(b"\x1b[?1049h", id="alternate-screen"),
        pytest.param(b"\x1b[2;8r", id="scroll-region"),
        pytest.param(b"\x1b[", id="inside-a-sequence"),
    ],
)
def test_no_skipping_in_unsafe_states(setup: bytes) -> None:
    cols, rows = 40, 10
    model = ScreenModel(cols, rows)
    model.feed(b"before\r\n" + setup)
    model.catch_up()
    flood = numbered_lines(0, 3000)
    for at in range(0, len(flood), 4096):
        model.feed(flood[at : at + 4096])
    assert model.skipped_bytes == 0
    assert_exact(model, Reference(cols, rows).feed(b"before\r\n" + setup + flood))


def test_skipping_resumes_after_the_unsafe_part_is_parsed() -> None:
    cols, rows = 40, 10
    before = numbered_lines(0, 100)
    output = before + b"\x1b[2;5r\x1b[3;1Hregion\x1b[r" + numbered_lines(100, 3000)
    model = ScreenModel(cols, rows)
    model.feed(output)
    assert 0 < model.skipped_bytes < len(before)  # only lines before the sequence
    model.catch_up()
    assert model.skipped_bytes > len(output) * 0.8
    assert_exact(model, Reference(cols, rows).feed(output))


def test_skipping_between_occasional_sequences() -> None:
    """A flood with a status line redrawn now and then (cursor up, title): the lines
    between the sequences are skipped once each sequence is parsed."""
    cols, rows = 60, 15
    parts = []
    for block in range(40):
        parts.append(numbered_lines(block * 300, 300))
        parts.append(b"\x1b[1A\x1b[2K\x1b[7m%d%%\x1b[0m\r\n\x1b]0;build %d\x07" % (block, block))
    output = b"".join(parts)
    model = ScreenModel(cols, rows)
    for at in range(0, len(output), 65536):
        model.feed(output[at : at + 65536])
    model.catch_up()
    assert model.skipped_bytes > len(output) * 0.8
    assert_exact(model, Reference(cols, rows).feed(output))


@pytest.mark.parametrize("tail_lines", [5, 9, 10, 11, 30])
def test_skipping_keeps_two_screens_of_lines(tail_lines: int) -> None:
    """The skipped part's rows must all have scrolled away: with the cursor at the top of a
    full screen before the flood, one screen of lines after the cut is not enough."""
    cols, rows = 10, 5
    output = (
        b"XXXXXXXXXX\r\n" * 4
        + b"XXXXXXXXXX\x1b[H"
        + b"p\r\n" * 400
        + b"\x1b[31m"
        + b"t\r\n" * tail_lines
    )
    model = ScreenModel(cols, rows)
    model.feed(output)
    model.catch_up()
    assert model.skipped_bytes > 800
    assert_exact(model, Reference(cols, rows).feed(output))


# ----- long lines without line feeds ------------------------------------------------------


@pytest.mark.parametrize(
    ("cols", "rows", "before", "length", "after"),
    [
        pytest.param(1, 1, b"", 40_001, b"", id="1x1"),
        pytest.param(1, 3, b"x", 50_000, b"\r\nnext", id="1-column"),
        pytest.param(5, 1, b"\x1b[31mab", 60_003, "\u0301".encode(), id="1-row-sgr-mark-after"),
        pytest.param(
            7, 3, "\x1b[1m日本語".encode(), 70_002, b"\x1b[A\x1b[2Dz", id="wide-characters-before"
        ),
        pytest.param(
            13,
            5,
            b"line\r\n" * 10 + b"abc\x1b[1;4m\x1b[38;5;200m",
            90_011,
            b"\x1b[0m tail",
            id="lines-then-a-partial-line",
        ),
        pytest.param(80, 24, b"z" * 80, 120_001, b"", id="pending-wrap-at-the-start"),
        pytest.param(9, 4, b"\x1b[2;3H", 70_000, b"\n\n", id="cursor-moved-up-before"),
        pytest.param(33, 9, b"\x1b[40G", 80_020, b"\x1b[1K", id="last-column-before"),
        pytest.param(
            11, 6, b"\x1b[?5h" + b"q" * 10 + b"\r\n" * 3, 70_005, b"\x1b[?5l", id="reverse-screen"
        ),
    ],
)
def test_long_lines_without_line_feeds_are_cut_and_exact(
    cols: int, rows: int, before: bytes, length: int, after: bytes
) -> None:
    """Checkpoints after long no-line-feed output equal the reference fed every byte, with
    chunk boundaries anywhere, whatever the start column, screen size and pen."""
    text = long_line(length, offset=length % 95)
    events: list[Event] = [before, text, after]
    reference = Reference(cols, rows).apply(events)
    for seed in range(3):
        model = ScreenModel(cols, rows)
        feed_in_chunks(model, events, random.Random(seed), max_chunk=70_000)
        assert_exact(model, reference)
        assert model.skipped_bytes > length // 2


_run_prefix = st.sampled_from(
    [
        *[b"", b"x", b"ab\x1b[31m", "日本".encode(), b"\x1b[1;4;38;5;200m", b"line\r\n"],
        *[b"\x1b[3;2H", b"\x1b[?7l", b"\x1b[4h", b"\x1b[?7l\x1b[?7h", b"\x1b[4h\x1b[4l", b"\t"],
        *[b"\x1b[2;3r", b"\x1b[r", b"\x1b[?1049h", b"\x1b[?1049l", b"\x1b[?5h", b"\x1b[20h"],
        *[b"\x1b[99C", b"\x08", b"\r", b"\x1b[K", b"\x1b]0;t\x07", b"\x1b[", "\u0301".encode()],
    ]
)


@st.composite
def _long_lines(draw: st.DrawFn) -> tuple[int, int, list[Event]]:
    cols = draw(st.integers(1, 12))
    rows = draw(st.integers(1, 6))
    events: list[Event] = []
    for _ in range(draw(st.integers(1, 4))):
        events.append(b"".join(draw(st.lists(_run_prefix, max_size=3))))
        events.append(long_line(draw(st.integers(1, 1500)), draw(st.integers(0, 94))))
    events.append(draw(st.sampled_from([b"", b"\r\nend", "\u0301".encode(), b"\x1b[A\x1b[2Dz"])))
    return cols, rows, events


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_long_lines(), st.randoms(use_true_random=False))
def test_long_lines_are_exact_with_eager_skipping(
    case: tuple[int, int, list[Event]], rng: random.Random
) -> None:
    cols, rows, events = case
    with eager_skipping():
        model = ScreenModel(cols, rows)
        feed_in_chunks(model, events, rng, max_chunk=300)
        assert_exact(model, Reference(cols, rows).apply(events))


def test_flood_without_line_feeds_is_skipped_and_checkpoint_matches_the_tail() -> None:
    """20 MB of text without a line feed: almost nothing is left to parse, and the
    checkpoint equals a reference fed the prompt and the last (2 * rows + 1) * cols
    characters, plus the length modulo cols (which keeps the column)."""
    cols, rows = 80, 24
    model = ScreenModel(cols, rows)
    model.feed(PROMPT)
    model.catch_up()
    chunk = long_line(95 * 690)  # whole cycles: the flood is one long cycling line
    total = 0
    while total < 20_000_000:
        model.feed(chunk)
        total += len(chunk)
    assert model.pending_bytes < COMPACT_MIN + run_keep(cols, rows) + cols
    assert model.skipped_bytes > total - 2 * COMPACT_MIN
    tail = run_keep(cols, rows) + total % cols
    expected = Reference(cols, rows).feed(PROMPT + long_line(tail, offset=(total - tail) % 95))
    assert_exact(model, expected)


@pytest.mark.parametrize(
    ("cols", "rows", "length"),
    [
        pytest.param(20, 4, 6000, id="lines-cut-to-a-few-screens"),
        pytest.param(80, 24, 3950, id="lines-just-long-enough-to-scroll-everything"),
    ],
)
def test_long_lines_with_line_feeds_leave_one_line(cols: int, rows: int, length: int) -> None:
    """Lines of thousands of characters: each wraps at least 2 * rows times, so the lines
    before the last one go, and what is kept of that one is cut to a few screens."""
    output = PROMPT + b"".join(long_line(length + i, i) + b"\r\n" for i in range(60)) + b"end"
    reference = Reference(cols, rows).feed(output)
    model = ScreenModel(cols, rows)
    model.feed(PROMPT)
    model.catch_up()
    for at in range(len(PROMPT), len(output), 65536):
        model.feed(output[at : at + 65536])
    model.catch_up()
    parsed = len(output) - model.skipped_bytes
    assert parsed < len(PROMPT) + 2 * (length + 60)
    assert_exact(model, reference)


@pytest.mark.parametrize(
    ("setup", "cut"),
    [
        pytest.param(b"\x1b[?7l", False, id="no-auto-wrap"),
        pytest.param(b"\x1b[4h", False, id="insert-mode"),
        pytest.param(b"\x1b[2;3r", False, id="scroll-region"),
        pytest.param(b"\x1b[?1049h", False, id="alternate-screen"),
        pytest.param(b"\x1b[?7l\x1b[4h\x1b[?7h\x1b[4l", True, id="modes-back-to-default"),
    ],
)
def test_long_lines_are_cut_only_with_auto_wrap_and_no_insert_mode(setup: bytes, cut: bool) -> None:
    cols, rows = 6, 3
    output = b"before\r\n" + setup + long_line(20_000)
    model = ScreenModel(cols, rows)
    model.feed(output[:-20_000])
    model.catch_up()
    for at in range(len(output) - 20_000, len(output), 1000):
        model.feed(output[at : at + 1000])
    model.catch_up()
    assert (model.skipped_bytes > 15_000) == cut
    assert_exact(model, Reference(cols, rows).feed(output))


def test_long_title_is_not_cut() -> None:
    """Printable text inside a sequence (a title) is not text on the screen."""
    cols, rows = 10, 3
    title = long_line(20_000)
    output = b"\x1b]0;" + title + b"\x07after" + long_line(5000)
    model = ScreenModel(cols, rows)
    model.feed(output)
    model.catch_up()
    reference = Reference(cols, rows).feed(output)
    assert reference.screen.title == title.decode()
    assert_exact(model, reference)
    assert model.skipped_bytes < 5000


@pytest.mark.parametrize(
    "sequence",
    [
        pytest.param(b"\x1b[?2004l\r", id="mode-then-cr"),
        pytest.param(b"\x1b[?25h", id="run-right-after-a-private-mode"),
        pytest.param(b"\x1b[5;1H", id="run-right-after-cursor-position"),
    ],
)
def test_long_line_after_a_sequence_is_cut_once_the_sequence_is_parsed(sequence: bytes) -> None:
    """Fed in one piece after a prompt full of sequences, nothing is skipped on feeding;
    catching up parses up to the long line and cuts it."""
    cols, rows = 20, 5
    output = PROMPT + sequence + long_line(200_000)
    model = ScreenModel(cols, rows)
    model.feed(output)
    assert model.pending_bytes == len(output)
    model.catch_up()
    assert model.skipped_bytes > 190_000
    assert_exact(model, Reference(cols, rows).feed(output))


def test_long_line_from_a_real_program() -> None:
    command = "printf 'prompt$ '; head -c 200000 /dev/zero | tr '\\0' a; printf '\\033[31mend'"
    output = run(["sh", "-c", command], cols=80, rows=24)
    assert output.endswith(b"a" * 1000 + b"\x1b[31mend")
    _check_recording(output, 80, 24)


# ----- memory --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "chunk",
    [
        pytest.param((b"a" * 79 + b"\r\n") * 800, id="lines"),
        pytest.param(b"a" * 65536, id="no-line-feeds"),
        pytest.param((long_line(9000) + b"\r\n") * 7, id="long-lines"),
    ],
)
def test_buffers_stay_bounded_during_a_flood_without_catch_up(chunk: bytes) -> None:
    """Dropped bytes are freed as the flood goes on, with nothing parsing: the buffers
    never hold more than twice what is pending, and the memory allocated stays small."""
    model = ScreenModel(80, 24)
    most_buffered = 0
    fed = 0
    tracemalloc.start()
    try:
        while fed < 60_000_000:
            model.feed(chunk)
            fed += len(chunk)
            buffered = model.buffered_bytes
            assert buffered <= 2 * model.pending_bytes
            most_buffered = max(most_buffered, buffered)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert model.skipped_bytes > fed - 4 * COMPACT_MIN
    assert most_buffered < 4 * COMPACT_MIN
    assert peak < 2 * 1024 * 1024


def test_resize_is_ordered_with_the_output() -> None:
    model = ScreenModel(10, 4)
    model.feed(b"0123456789ab")  # wraps at 10 columns
    model.resize(20, 4)
    model.feed(b"\r\n0123456789abcdef")
    assert model.size == (20, 4)
    lines, cursor = model.snapshot()
    assert lines == ["0123456789", "ab", "0123456789abcdef", ""]
    assert cursor == (16, 2)


# ----- threads -----------------------------------------------------------------------------


def test_feeding_while_another_thread_catches_up() -> None:
    cols, rows = 50, 12
    rng = random.Random(7)
    parts = [PROMPT]
    for i in range(300):
        parts.append(rng.choice([numbered_lines(i * 50, 50), full_screen_redraws(1, cols, rows)]))
        parts.append(rng.choice([b"", b"\x1b[?1049l", b"\x1b[3A\x1b[2K", b"\x1b]2;t\x07"]))
    output = b"".join(parts)
    model = ScreenModel(cols, rows)
    done = threading.Event()
    errors: list[BaseException] = []

    def parse() -> None:
        try:
            while not done.is_set():
                model.catch_up(rng.choice([None, 10_000]))
                if rng.random() < 0.1:
                    model.checkpoint()
        except BaseException as exc:  # reported below
            errors.append(exc)

    worker = threading.Thread(target=parse)
    worker.start()
    try:
        at = 0
        while at < len(output):
            size = rng.randint(1, 65536)
            model.feed(output[at : at + size])
            at += size
    finally:
        done.set()
        worker.join(timeout=60)
    assert not errors
    assert_exact(model, Reference(cols, rows).feed(output))


# ----- the terminal semantics --------------------------------------------------------------


def _screen(data: bytes, cols: int = 20, rows: int = 5) -> TerminalScreen:
    screen = TerminalScreen(cols, rows)
    TerminalStream(screen).feed(data)
    return screen


def test_alternate_screen_keeps_the_main_screen_and_cursor() -> None:
    screen = _screen(b"main text\r\nsecond\x1b[1;3H\x1b[31m\x1b[?1049h\x1b[0mALT\x1b[5;5H")
    assert screen.in_alternate_screen
    assert screen.display[0] == "  ALT" + " " * 15  # the cursor stays where it was
    TerminalStream(screen).feed(b"\x1b[?1049l")
    assert not screen.in_alternate_screen
    assert screen.display[0].rstrip() == "main text"
    assert (screen.cursor.x, screen.cursor.y) == (2, 0)
    assert screen.cursor.attrs.fg == "red"


def test_47_switches_without_saving_the_cursor() -> None:
    screen = _screen(b"main\x1b[?47hALT\x1b[3;3H\x1b[?47l")
    assert screen.display[0].rstrip() == "main"
    assert (screen.cursor.x, screen.cursor.y) == (2, 2)


def test_zero_width_characters_do_not_drop_text() -> None:
    model = ScreenModel(20, 3)
    model.feed("❤️ love 👨\u200d👩 x\x01\u0085y".encode())
    assert model.snapshot()[0][0] == "❤\ufe0f love 👨\u200d👩 xy"


@pytest.mark.parametrize(
    "output",
    [
        pytest.param("日本\x1b[2G\x1b[P", id="wide-character-without-its-placeholder"),
        pytest.param("日\x1b[1G\x1b[P", id="placeholder-in-the-first-column"),
        pytest.param("ab日\x1b[3Gx", id="placeholder-in-the-last-column"),
        pytest.param("ab\x1b[31m日\x1b[3G\x1b[0m日\x1b[2D\x1b[@", id="placeholders-shifted"),
        pytest.param("a日", id="pending-wrap-after-a-wide-character"),
        pytest.param("abc\u0301\u0302", id="pending-wrap-and-marks"),
        pytest.param("日\u0301x", id="mark-joined-to-a-placeholder"),
        pytest.param("\x1b[?5hab\x1b[?1049hc\x1b[?5l", id="reverse-screen-and-both-buffers"),
        pytest.param("\x1b[2;3r\x1b[?6h\x1b[2;2Hx\x1b7\x1b[?6l\x1b[4h", id="origin-margins-insert"),
        pytest.param("\x1b[3g\x1b[2G\x1bH\x1b[20h\x1b[?7l\x1b[?25l", id="tabs-and-modes"),
    ],
)
def test_checkpoint_of_awkward_states(output: str) -> None:
    for cols in (4, 3):
        model = ScreenModel(cols, 3)
        model.feed(output.encode())
        assert_exact(model, Reference(cols, 3).feed(output.encode()))


def test_a_checkpoint_resets_then_restores_modes_and_holds_each_glyph_once() -> None:
    model = ScreenModel(10, 3)
    model.feed("ab日\x1b[41mc\x1b[?1049h\x1b[1;10Hz\x1b[?25l".encode())
    checkpoint = model.checkpoint()
    assert checkpoint.startswith(b"\x1bc")
    assert b"\x1b[?1049h" in checkpoint
    assert checkpoint.endswith(b"\x1b[?25l") or b"\x1b[?25l" in checkpoint
    assert "日".encode() in checkpoint
    assert checkpoint.count("日".encode()) == 1
    checkpoint.decode("utf-8")


# ----- bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cols", "rows", "error"),
    [(0, 24, ValueError), (80, 10000, ValueError), ("80", 24, TypeError), (80, 2.5, TypeError)],
)
def test_bad_sizes_are_rejected(cols: object, rows: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        ScreenModel(cols, rows)  # type: ignore[arg-type]
    model = ScreenModel(80, 24)
    with pytest.raises(error):
        model.resize(cols, rows)  # type: ignore[arg-type]
    assert model.size == (80, 24)


def test_bad_feed_and_catch_up_arguments_change_nothing() -> None:
    model = ScreenModel(80, 24)
    model.feed(b"hello")
    with pytest.raises(TypeError):
        model.feed("text")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_bytes must be None or a non-negative int"):
        model.catch_up(-1)
    assert model.pending_bytes == 5
    assert model.snapshot()[0][0] == "hello"
