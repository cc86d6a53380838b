"""The one polling helper, in a blocking and an event-loop flavour.

Tests wait on conditions, never on sleeps: both flavours ask `condition` until it answers
something truthy, return that answer, and fail with `what` after the deadline. `what` may be
a function, asked only on failure (to say what was seen instead). The async flavour also
accepts a condition that returns an awaitable (a round trip to a process)."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any

DEADLINE = 15.0

What = str | Callable[[], object]


def _say(what: What, condition: object) -> object:
    if callable(what):
        return what()
    return what or condition


def wait_until(
    condition: Callable[[], Any], timeout: float = 10.0, interval: float = 0.02, what: What = ""
) -> Any:
    """Poll `condition` until it returns something truthy; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not met within {timeout}s: {_say(what, condition)}")
        time.sleep(interval)


async def wait_for(
    condition: Callable[[], object | Awaitable[object]],
    within: float = DEADLINE,
    what: What = "",
    interval: float = 0.01,
) -> Any:
    """Poll `condition` on the loop until truthy (awaiting it when it returns an awaitable);
    fail after `within` seconds."""
    deadline = time.monotonic() + within
    while True:
        value = condition()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {_say(what, condition)}")
        await asyncio.sleep(interval)
