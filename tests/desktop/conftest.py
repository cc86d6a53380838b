"""Fixtures for the window tests: a private Xvfb display and a `desk` to open under it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.desk import cleanup, make_desk
from tests.support.window import Window
from tests.support.xvfb import Display, start_xvfb, stop_xvfb


@pytest.fixture(scope="module")
def xvfb() -> Iterator[Display]:
    display = start_xvfb()
    try:
        yield display
    finally:
        stop_xvfb(display)


@pytest.fixture
def window(tmp_path: Path, xvfb: Display) -> Iterator[Window]:
    desk = make_desk(tmp_path)
    try:
        yield Window(desk=desk, display=xvfb, probe_path=tmp_path / "probe.json")
    finally:
        cleanup(desk)
