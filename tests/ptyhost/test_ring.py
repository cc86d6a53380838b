"""The output ring: absolute offsets, growth as output arrives, wrap-around."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop.ptyhost.ring import OutputRing


def test_starts_small_and_grows_only_with_output() -> None:
    ring = OutputRing(1024 * 1024, initial=4096)
    assert ring.allocated == 4096
    ring.append(b"x" * 5000)
    assert 5000 <= ring.allocated < 1024 * 1024
    assert (ring.head, ring.tail) == (0, 5000)


def test_wrap_keeps_the_newest_bytes_with_absolute_offsets() -> None:
    ring = OutputRing(10, initial=4)
    ring.append(b"0123456789")
    ring.append(b"abcd")
    assert (ring.head, ring.tail) == (4, 14)
    assert ring.read(4, 14) == b"456789abcd"
    assert ring.read(10, 12) == b"ab"
    with pytest.raises(ValueError, match="outside"):
        ring.read(3, 5)
    with pytest.raises(ValueError, match="outside"):
        ring.read(10, 15)


def test_a_chunk_larger_than_the_ring_keeps_its_end() -> None:
    ring = OutputRing(8)
    ring.append(b"abcdefghijkl")
    assert (ring.head, ring.tail) == (4, 12)
    assert ring.read(4, 12) == b"efghijkl"


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 64), st.lists(st.binary(max_size=50), max_size=30))
def test_matches_a_plain_byte_string(capacity: int, chunks: list[bytes]) -> None:
    ring = OutputRing(capacity, initial=1)
    everything = b""
    for chunk in chunks:
        ring.append(chunk)
        everything += chunk
        assert ring.tail == len(everything)
        assert ring.head == max(0, len(everything) - capacity)
        assert ring.read(ring.head, ring.tail) == everything[ring.head :]
    for start in range(ring.head, ring.tail + 1):
        assert ring.read(start, ring.tail) == everything[start:]
