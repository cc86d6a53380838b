"""Checks on decoded JSON values that every part of Desk shares.

Like desktop.config it imports nothing of Desk, so every part may import it.
"""

from __future__ import annotations

from typing import TypeGuard


def strict_int(value: object) -> TypeGuard[int]:
    """An int that is not a bool: JSON `true` is not a size, a pid or a byte count."""
    return isinstance(value, int) and not isinstance(value, bool)
