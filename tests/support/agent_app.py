"""The in-process service whose agent talks to the strict fake provider: the `fake` and `agent`
fixtures shared by the runner, rules, checkpoint and security tests (a pytest plugin)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient

from desktop.config import Settings
from desktop.server.app import create_app
from tests.support.app import TOKEN, ClientFactory
from tests.support.fake_provider import FakeProvider
from tests.support.host import stop_host
from tests.support.runner import configure

AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
async def fake() -> AsyncIterator[FakeProvider]:
    async with FakeProvider() as provider:
        yield provider


@pytest.fixture
async def agent(
    aiohttp_client: ClientFactory, settings: Settings, web_dist: Path, fake: FakeProvider
) -> AsyncIterator[TestClient]:
    """The real app on a real socket, configured for `fake`; its PTY host stops afterwards."""
    configure(settings, fake.base_url)
    yield await aiohttp_client(create_app(settings, token=TOKEN))
    await stop_host(settings)
