"""A workspace folder per test, and the context the tools get for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.tools.base import ToolContext

# The shell tool's tests run commands in a real PTY host: the same fixtures as its own tests.


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def ctx(workspace: Path) -> ToolContext:
    return ToolContext(root=workspace)
