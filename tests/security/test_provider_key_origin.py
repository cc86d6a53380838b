"""A stored provider key belongs to the server it was given for: a request that moves the base
URL to another origin without a key deletes it, and DESK_API_KEY follows only DESK_BASE_URL."""

from __future__ import annotations

import dataclasses

from desktop.config import ProviderSettings, Settings
from desktop.provider.settings import ProviderConfigStore, parse_update

KEY = "sk-live-abcdefghijklmnop0123456789"
HOME = {"provider": "openai-compatible", "base_url": "https://api.example.com/v1", "model": "m"}


def sent_key(store: ProviderConfigStore) -> str:
    profile = store.profile()
    assert profile is not None
    return profile.api_key


def test_changing_only_the_base_urls_origin_drops_the_stored_key(settings: Settings) -> None:
    store = ProviderConfigStore(settings)
    store.save(parse_update({**HOME, "api_key": KEY}))
    moved = store.save(parse_update({**HOME, "base_url": "https://evil.example.net/v1"}))
    assert moved["api_key_set"] is False
    assert sent_key(store) == ""
    assert not settings.provider_key_path.exists()


def test_a_port_or_scheme_change_is_another_origin_too(settings: Settings) -> None:
    store = ProviderConfigStore(settings)
    for url in ("https://api.example.com:8443/v1", "http://api.example.com/v1"):
        store.save(parse_update({**HOME, "api_key": KEY}))
        store.save(parse_update({**HOME, "base_url": url}))
        assert sent_key(store) == ""


def test_the_same_origin_keeps_the_key_and_a_new_key_with_the_move_is_used(
    settings: Settings,
) -> None:
    store = ProviderConfigStore(settings)
    store.save(parse_update({**HOME, "api_key": KEY}))
    store.save(parse_update({**HOME, "base_url": "https://api.example.com/v2", "model": "n"}))
    assert sent_key(store) == KEY
    store.save(parse_update({**HOME, "base_url": "https://other.example/v1", "api_key": "sk-2"}))
    assert sent_key(store) == "sk-2"


def test_the_environments_key_is_sent_only_to_the_environments_server(
    settings: Settings,
) -> None:
    env = ProviderSettings(base_url="https://api.example.com/v1", model="m", api_key=KEY)
    store = ProviderConfigStore(dataclasses.replace(settings, provider=env))
    assert sent_key(store) == KEY
    store.save(parse_update({**HOME, "base_url": "https://evil.example.net/v1"}))
    assert sent_key(store) == ""
