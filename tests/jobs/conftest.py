"""Fixtures of the background-job tests: a reopenable real SQLite store with its bus
(tests/support/jobs.py), and the strict fake provider for the `desk serve` processes they start."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.fake_provider import FakeProvider
from tests.support.jobs import Stores


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[Stores]:
    s = Stores(tmp_path / "desk.sqlite3")
    yield s
    await s.close_all()


@pytest.fixture
async def fake(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeProvider]:
    """The strict fake provider, configured through the environment that the `desk serve`
    processes these tests start inherit."""
    async with FakeProvider() as provider:
        monkeypatch.setenv("DESK_PROVIDER", "openai-compatible")
        monkeypatch.setenv("DESK_BASE_URL", provider.base_url)
        monkeypatch.setenv("DESK_MODEL", "fake-model")
        monkeypatch.setenv("DESK_API_KEY", "sk-test")
        yield provider
