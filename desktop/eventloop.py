"""The event loop both daemons run on: uvloop when it is installed, else asyncio's own.

uvloop (libuv) roughly halves the per-wake-up cost of the loop, which is most of what a
keystroke's round trip costs once the service is out of the byte path. `DESK_EVENT_LOOP=
asyncio` forces the standard loop (to compare, or to rule uvloop out when debugging).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


EVENT_LOOP_ENV = "DESK_EVENT_LOOP"


def run(main: Coroutine[Any, Any, T], kind: str | None = None) -> T:
    """Run `main` on the loop `kind` names (default: DESK_EVENT_LOOP, else uvloop)."""
    if (kind or os.environ.get(EVENT_LOOP_ENV, "uvloop")) != "asyncio":
        try:
            import uvloop
        except ImportError:
            pass
        else:
            with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
                return runner.run(main)
    return asyncio.run(main)
