"""Identifiers: a prefix, the creation time in milliseconds (so ids sort by age), a random
process tag and a counter (so two processes, or two ids in one millisecond, never collide).

Ids are names, not secrets: one `os.urandom` per process is enough, and an id costs no
system call (event ids are minted on the hot path of every publish).
"""

from __future__ import annotations

import itertools
import os
import time

_TAG = os.urandom(4).hex()
_COUNTER = itertools.count(int.from_bytes(os.urandom(2), "big"))


def new_id(prefix: str) -> str:
    return f"{prefix}_{int(time.time() * 1000):012x}{_TAG}{next(_COUNTER) & 0xFFFFFFFF:08x}"
