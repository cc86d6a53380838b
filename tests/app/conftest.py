"""Fixtures for the CLI tests: a `desk` on private dirs (helpers: tests/support/desk.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.desk import Desk, cleanup, make_desk


@pytest.fixture
def desk(tmp_path: Path) -> Iterator[Desk]:
    handle = make_desk(tmp_path)
    try:
        yield handle
    finally:
        cleanup(handle)
