"""An in-process service (real aiohttp app on a real socket) for route tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient

from desktop.config import Settings
from desktop.server.app import create_app
from tests.support.host import stop_host

TOKEN = "t" * 43

ClientFactory = Callable[..., Awaitable[TestClient]]


@pytest.fixture
async def client(aiohttp_client: ClientFactory, settings: Settings, web_dist: Path) -> TestClient:
    return await aiohttp_client(create_app(settings, token=TOKEN))


@pytest.fixture
def auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
async def api(client: TestClient, settings: Settings) -> AsyncIterator[TestClient]:
    """The service's test client; the PTY host it starts is stopped afterwards."""
    yield client
    await stop_host(settings)
