"""The C printable scans agree with their `re` references on every input, word edges included."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from desktop.native import bytescan

# Bytes around both edges of 0x20-0x7e and of the high bit, plus plain text to make runs.
EDGES = [0x00, 0x0A, 0x1B, 0x1F, 0x20, 0x61, 0x7E, 0x7F, 0x80, 0x9B, 0xC2, 0xFE, 0xFF]
DATA = st.lists(
    st.one_of(st.sampled_from(EDGES), st.just(0x61), st.integers(0, 255)), max_size=80
).map(bytearray)


def test_the_extension_is_what_runs() -> None:
    assert bytescan.printable_end is not bytescan.printable_end_re
    assert bytescan.printable_start is not bytescan.printable_start_re


@given(DATA, st.data())
def test_printable_end_and_start_match_the_regex_references(
    data: bytearray, draw: st.DataObject
) -> None:
    start = draw.draw(st.integers(0, len(data)))
    end = draw.draw(st.integers(start, len(data)))
    assert bytescan.printable_end(data, start, end) == bytescan.printable_end_re(data, start, end)
    assert bytescan.printable_start(data, start, end) == bytescan.printable_start_re(
        data, start, end
    )


@pytest.mark.parametrize("position", range(17))
def test_a_single_control_byte_is_found_at_every_offset_within_a_word(position: int) -> None:
    for control in (0x00, 0x1F, 0x7F, 0x80, 0xFF):
        data = bytearray(b"a" * 17)
        data[position] = control
        assert bytescan.printable_end(data, 0, 17) == position
        assert bytescan.printable_start(data, 0, 17) == position + 1


def test_long_text_is_scanned_to_its_ends() -> None:
    data = bytearray(b"\n" + b"x" * 100_003 + b"\x1b")
    assert bytescan.printable_end(data, 1, len(data)) == 100_004
    assert bytescan.printable_start(data, 0, 100_004) == 1


@pytest.mark.parametrize(("start", "end"), [(-1, 3), (2, 1), (0, 11)])
def test_a_range_outside_the_data_is_refused(start: int, end: int) -> None:
    with pytest.raises(IndexError):
        bytescan.printable_end(bytearray(10), start, end)
    with pytest.raises(IndexError):
        bytescan.printable_start(bytearray(10), start, end)
