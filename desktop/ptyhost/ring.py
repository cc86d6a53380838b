"""A terminal's recent output with absolute byte offsets.

Offsets count every byte the terminal ever produced: `tail` is the total, `head` the oldest
byte still held. The storage starts small and doubles as output arrives, up to `capacity`;
from then on it is circular and the oldest bytes are overwritten.
"""

from __future__ import annotations

INITIAL_ALLOCATION = 8192


class OutputRing:
    def __init__(self, capacity: int, initial: int = INITIAL_ALLOCATION) -> None:
        if capacity < 1:
            raise ValueError("ring capacity must be at least 1 byte")
        self.capacity = capacity
        self._buffer = bytearray(min(capacity, max(1, initial)))
        self._head = 0
        self._tail = 0

    @property
    def head(self) -> int:
        """Oldest offset still replayable."""
        return self._head

    @property
    def tail(self) -> int:
        """Total bytes ever appended (the offset the next byte will get)."""
        return self._tail

    @property
    def allocated(self) -> int:
        return len(self._buffer)

    def _grow(self, needed: int) -> None:
        # Only called before the ring first fills, so the bytes sit at [0, tail).
        size = len(self._buffer)
        new_size = min(self.capacity, max(size * 2, needed))
        grown = bytearray(new_size)
        grown[: self._tail] = self._buffer[: self._tail]
        self._buffer = grown

    def append(self, data: bytes | bytearray | memoryview) -> None:
        count = len(data)
        if not count:
            return
        if self._tail + count > len(self._buffer) and len(self._buffer) < self.capacity:
            self._grow(self._tail + count)
        size = len(self._buffer)
        with memoryview(data) as view:
            if count > size:
                # Only the newest `size` bytes can be kept.
                view = view[count - size :]
                self._tail += count - size
                count = size
            position = self._tail % size
            first = min(count, size - position)
            self._buffer[position : position + first] = view[:first]
            if first < count:
                self._buffer[: count - first] = view[first:]
        self._tail += count
        self._head = max(self._head, self._tail - size)

    def _check(self, start: int, end: int) -> None:
        if not self._head <= start <= end <= self._tail:
            raise ValueError(
                f"range [{start}, {end}) is outside the ring's [{self._head}, {self._tail})"
            )

    def read(self, start: int, end: int) -> bytes:
        target = bytearray(end - start)
        self.copy_into(target, 0, start, end)
        return bytes(target)

    def copy_into(self, target: bytearray, at: int, start: int, end: int) -> None:
        """Copy bytes [start, end) into `target[at:]` without intermediate copies."""
        self._check(start, end)
        count = end - start
        if not count:
            return
        size = len(self._buffer)
        position = start % size
        first = min(count, size - position)
        with memoryview(self._buffer) as source:
            target[at : at + first] = source[position : position + first]
            if first < count:
                target[at + first : at + count] = source[: count - first]
