"""Identifiers: a prefix, the creation time in milliseconds (so ids sort by age) and 64
random bits (so two processes or a replay never collide)."""

from __future__ import annotations

import secrets
import time


def new_id(prefix: str) -> str:
    return f"{prefix}_{int(time.time() * 1000):012x}{secrets.token_hex(8)}"
