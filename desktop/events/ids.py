"""Identifiers: a prefix, the creation time in milliseconds (so ids sort by age), a random
process tag and a counter (so two processes, or two ids in one millisecond, never collide).
"""

from __future__ import annotations

import hashlib
import itertools
import os
import time

_TAG = os.urandom(4).hex()
_COUNTER = itertools.count(int.from_bytes(os.urandom(2), "big"))


def new_id(prefix: str) -> str:
    """Ids are names, not secrets: one `os.urandom` per process is enough, and an id costs no
    system call (event ids are minted on the hot path of every publish).
    """

    return f"{prefix}_{int(time.time() * 1000):012x}{_TAG}{next(_COUNTER) & 0xFFFFFFFF:08x}"


def derived_id(prefix: str, name: str) -> str:
    """The same id for the same name, in every process and after every restart: for things
    that must exist at most once (a job's notice), so a second attempt collides instead of
    creating a twin."""
    return f"{prefix}_{hashlib.sha256(name.encode()).hexdigest()[:32]}"
