"""The in-process service the route tests share (a pytest plugin): its fixed token, aiohttp's
client factory, and the `client`, `auth` and `api` fixtures (a real aiohttp app on a real
socket, its model provider never answering)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient

from desktop.config import Settings
from desktop.provider.profiles import Profile
from desktop.server.app import create_app
from tests.support.host import stop_host

TOKEN = "t" * 43  # the token the in-process app is created with
ClientFactory = Callable[..., Awaitable[TestClient]]


async def no_answer() -> Profile | None:
    """A provider that never answers: a prompted turn holds its claim and waits at its first
    step, so a prompt's rows stay as the prompt wrote them (tests/server/test_runner_* run
    whole turns against the fake provider)."""
    await asyncio.Event().wait()
    return None


@pytest.fixture
async def client(aiohttp_client: ClientFactory, settings: Settings, web_dist: Path) -> TestClient:
    return await aiohttp_client(create_app(settings, token=TOKEN, profile=no_answer))


@pytest.fixture
def auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
async def api(client: TestClient, settings: Settings) -> AsyncIterator[TestClient]:
    """The service's test client; the PTY host it starts is stopped afterwards."""
    yield client
    await stop_host(settings)
