"""An in-process service (real aiohttp app on a real socket) for route tests.

TOKEN and ClientFactory (tests/support/app.py) stay importable from here for route tests
written before the move."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient

from desktop.config import Settings
from desktop.server.app import create_app
from tests.support.app import TOKEN, ClientFactory
from tests.support.host import stop_host


@pytest.fixture
async def client(aiohttp_client: ClientFactory, settings: Settings, web_dist: Path) -> TestClient:
    # The session engine without the agent: prompts stay in the inbox (tests/events, tests/agent and
    # tests/server/test_runner_* run the agent).
    return await aiohttp_client(create_app(settings, token=TOKEN, agent=False))


@pytest.fixture
def auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
async def api(client: TestClient, settings: Settings) -> AsyncIterator[TestClient]:
    """The service's test client; the PTY host it starts is stopped afterwards."""
    yield client
    await stop_host(settings)


__all__ = ["TOKEN", "ClientFactory", "api", "auth", "client"]
