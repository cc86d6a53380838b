"""An in-process service (real aiohttp app on a real socket) for route tests."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient

from desktop.config import Settings
from desktop.server.app import create_app

TOKEN = "t" * 43

ClientFactory = Callable[..., Awaitable[TestClient]]


@pytest.fixture
async def client(aiohttp_client: ClientFactory, settings: Settings, web_dist: Path) -> TestClient:
    # The session engine without the agent: prompts stay in the inbox (tests/session and
    # tests/server/test_runner_* run the agent).
    return await aiohttp_client(create_app(settings, token=TOKEN, agent=False))


@pytest.fixture
def auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}
