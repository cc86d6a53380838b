"""GET/PUT /api/config/provider: validation, environment defaults, a key never returned."""

from __future__ import annotations

import json
import logging
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from desktop.config import Settings, load_settings
from desktop.provider.settings import ProviderConfigStore
from desktop.server.app import create_app

TOKEN = "t" * 43
AUTH = {"Authorization": f"Bearer {TOKEN}"}
KEY = "sk-live-abcdefghijklmnop0123456789"
URL = "/api/config/provider"
GOOD = {"provider": "openai-compatible", "base_url": "http://127.0.0.1:8080/v1", "model": "qwen3"}

ClientFactory = Callable[..., Awaitable[TestClient]]


@pytest.fixture
async def client(aiohttp_client: ClientFactory, settings: Settings, web_dist: Path) -> TestClient:
    return await aiohttp_client(create_app(settings, token=TOKEN))


async def get(client: TestClient) -> dict[str, Any]:
    response = await client.get(URL, headers=AUTH)
    assert response.status == 200
    data: dict[str, Any] = (await response.json())["data"]
    return data


async def test_put_then_get_round_trips_and_says_only_that_a_key_is_set(
    client: TestClient, settings: Settings
) -> None:
    response = await client.put(URL, json={**GOOD, "api_key": KEY}, headers=AUTH)
    assert response.status == 200
    raw = await response.text()
    assert KEY not in raw
    data = await get(client)
    assert data["provider"] == "openai-compatible"
    assert data["model"] == "qwen3"
    assert data["base_url"] == "http://127.0.0.1:8080/v1"
    assert data["api_key_set"] is True
    assert data["configured"] is True
    assert "api_key" not in data
    assert KEY not in json.dumps(data)
    assert KEY not in settings.provider_config_path.read_text()
    assert settings.provider_key_path.read_text().strip() == KEY


async def test_config_and_key_files_are_private(client: TestClient, settings: Settings) -> None:
    await client.put(URL, json={**GOOD, "api_key": KEY}, headers=AUTH)
    for path in (settings.provider_config_path, settings.provider_key_path):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


async def test_put_without_api_key_keeps_the_key_and_null_removes_it(
    client: TestClient, settings: Settings
) -> None:
    await client.put(URL, json={**GOOD, "api_key": KEY}, headers=AUTH)
    await client.put(URL, json={**GOOD, "model": "other"}, headers=AUTH)
    assert (await get(client))["api_key_set"] is True
    assert ProviderConfigStore(settings).load()[1] == KEY
    await client.put(URL, json={**GOOD, "api_key": None}, headers=AUTH)
    assert (await get(client))["api_key_set"] is False
    assert not settings.provider_key_path.exists()


@pytest.mark.parametrize(
    "body",
    [
        {**GOOD, "provider": "anthropic"},
        {**GOOD, "provider": 3},
        {k: v for k, v in GOOD.items() if k != "provider"},
        {**GOOD, "model": ""},
        {**GOOD, "model": ["qwen"]},
        {k: v for k, v in GOOD.items() if k != "model"},
        {**GOOD, "base_url": "ftp://host/v1"},
        {**GOOD, "base_url": "not a url"},
        {**GOOD, "base_url": "http://user:pass@host/v1"},
        {**GOOD, "base_url": "http://host/v1?key=secret"},
        {**GOOD, "base_url": ""},
        {**GOOD, "base_url": 8080},
        {**GOOD, "api_key": 12345},
        {**GOOD, "api_key": "sk-with\nnewline"},
        {**GOOD, "api_key": "sk with space"},
        {**GOOD, "mistral": "yes"},
        {**GOOD, "parallel_tool_calls": 1},
        {**GOOD, "service_tier": 5},
        {**GOOD, "surprise": True},
        {**GOOD, "model": "m" * 300},
    ],
)
async def test_bad_input_is_400_request_invalid_and_changes_nothing(
    client: TestClient, settings: Settings, body: dict[str, Any]
) -> None:
    await client.put(URL, json={**GOOD, "api_key": KEY}, headers=AUTH)
    before = await get(client)
    config_before = settings.provider_config_path.read_bytes()
    response = await client.put(URL, json=body, headers=AUTH)
    assert response.status == 400
    error = (await response.json())["error"]
    assert error["type"] == "request.invalid"
    assert error["message"]
    assert "secret" not in error["message"]
    assert "newline" not in error["message"]
    assert await get(client) == before
    assert settings.provider_config_path.read_bytes() == config_before
    assert settings.provider_key_path.read_text().strip() == KEY


async def test_not_json_is_400(client: TestClient) -> None:
    response = await client.put(URL, data=b"{nope", headers=AUTH)
    assert response.status == 400
    assert (await response.json())["error"]["type"] == "request.invalid_json"


async def test_groq_and_openai_need_no_base_url(client: TestClient) -> None:
    response = await client.put(
        URL, json={"provider": "groq", "model": "qwen/qwen3-32b"}, headers=AUTH
    )
    assert response.status == 200
    data = await get(client)
    assert data["effective_base_url"] == "https://api.groq.com/openai/v1"
    assert data["configured"] is True
    assert data["api_key_set"] is False


async def test_routes_need_the_token(client: TestClient) -> None:
    assert (await client.get(URL)).status == 401
    assert (await client.put(URL, json=GOOD)).status == 401


async def test_environment_gives_the_defaults_until_a_config_is_saved(
    aiohttp_client: ClientFactory,
    settings: Settings,
    web_dist: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DESK_PROVIDER", "groq")
    monkeypatch.setenv("DESK_MODEL", "openai/gpt-oss-20b")
    monkeypatch.setenv("DESK_API_KEY", KEY)
    env_settings = load_settings()
    client = await aiohttp_client(create_app(env_settings, token=TOKEN))
    data = await get(client)
    assert (data["provider"], data["model"], data["source"]) == (
        "groq",
        "openai/gpt-oss-20b",
        "environment",
    )
    assert data["api_key_set"] is True
    assert KEY not in json.dumps(data)
    profile = ProviderConfigStore(env_settings).profile()
    assert profile is not None
    assert profile.api_key == KEY
    await client.put(URL, json=GOOD, headers=AUTH)
    data = await get(client)
    assert (data["provider"], data["source"]) == ("openai-compatible", "file")
    # DESK_API_KEY was given for groq's server: it never follows the URL to another one.
    assert data["api_key_set"] is False


async def test_nothing_configured_is_reported_not_an_error(
    client: TestClient, settings: Settings
) -> None:
    data = await get(client)
    assert data["configured"] is False
    assert data["api_key_set"] is False
    assert ProviderConfigStore(settings).profile() is None


async def test_corrupt_config_file_falls_back_to_the_environment(
    client: TestClient, settings: Settings
) -> None:
    settings.provider_config_path.write_text('{"provider": "nope", "model": 1}')
    assert (await get(client))["configured"] is False


async def test_the_key_is_never_logged(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG):
        await client.put(URL, json={**GOOD, "api_key": KEY}, headers=AUTH)
        await client.put(URL, json={**GOOD, "api_key": KEY + " x"}, headers=AUTH)
        await get(client)
    assert KEY not in caplog.text


def test_a_bad_desk_base_url_leaves_the_provider_unconfigured(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DESK_BASE_URL", "http://user:pw@host/v1")
    monkeypatch.setenv("DESK_MODEL", "m")
    store = ProviderConfigStore(load_settings())
    assert store.public()["configured"] is False
    assert store.profile() is None
