"""Titles (OSC 0/2) and bells found in output, whatever the chunking."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from desktop.ptyhost.output_scan import OutputScanner


def scan_all(chunks: list[bytes]) -> tuple[list[str], int]:
    scanner = OutputScanner()
    titles, bells = [], 0
    for chunk in chunks:
        result = scanner.scan(chunk)
        if result.title is not None:
            titles.append(result.title)
        bells += result.bell
    return titles, bells


def test_osc_titles_with_both_terminators() -> None:
    assert scan_all([b"a\x1b]0;first\x07b"]) == (["first"], 0)
    assert scan_all([b"\x1b]2;second\x1b\\"]) == (["second"], 0)
    assert scan_all([b"\x1b]2;caf\xc3\xa9\x07"]) == (["caf\u00e9"], 0)


def test_other_osc_codes_are_not_titles_and_their_bel_is_not_a_bell() -> None:
    assert scan_all([b"\x1b]7;file:///tmp\x07\x1b]1;icon\x07"]) == ([], 0)


def test_bell_outside_an_osc() -> None:
    assert scan_all([b"ding\x07"]) == ([], 1)
    assert scan_all([b"\x07\x1b]0;t\x07\x07"]) == (["t"], 1)


def test_an_osc_cut_short_by_another_escape_is_dropped() -> None:
    assert scan_all([b"\x1b]0;broken\x1b[31mred\x07"]) == ([], 1)


def test_huge_osc_bodies_are_skipped() -> None:
    assert scan_all([b"\x1b]0;" + b"x" * 10_000 + b"\x07"]) == ([], 0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 60), max_size=8))
def test_any_chunking_finds_the_same_titles_and_bells(cuts: list[int]) -> None:
    stream = b"pre\x1b]0;one\x07mid\x07\x1b]2;two\x1b\\x\x1b]0;three\x07\x1b[1mz\x07"
    points = sorted({min(cut, len(stream)) for cut in cuts})
    chunks, start = [], 0
    for point in points:
        chunks.append(stream[start:point])
        start = point
    chunks.append(stream[start:])
    titles, bells = scan_all(chunks)
    # A chunk reports its last title only; the final title is always the right one.
    assert titles[-1] == "three"
    assert all(title in ("one", "two", "three") for title in titles)
    assert titles == sorted(titles, key=["one", "two", "three"].index)
    assert bells >= 1
