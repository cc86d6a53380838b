"""The runner tests' helpers live in tests/support/runner.py; re-exported here for the tests
that import them from this module."""

from tests.support.runner import (
    DEADLINE,
    configure,
    log,
    messages,
    new_session,
    prompt,
    types,
    until_event,
    until_idle,
)

__all__ = [
    "DEADLINE",
    "configure",
    "log",
    "messages",
    "new_session",
    "prompt",
    "types",
    "until_event",
    "until_idle",
]
