"""The service answers only requests addressed to a loopback host (DNS-rebinding defence)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient

from desktop.config import Settings
from desktop.server.app import create_app
from desktop.server.hosts import HostPolicy, host_name
from tests.support.app import TOKEN, ClientFactory


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("127.0.0.1:8123", "127.0.0.1"),
        ("LOCALHOST", "localhost"),
        ("[::1]:9000", "::1"),
        ("[::1]", "::1"),
        ("desk.example.:80", "desk.example"),
    ],
)
def test_host_name_drops_port_brackets_and_case(header: str, name: str) -> None:
    assert host_name(header) == name


@pytest.mark.parametrize(
    "header",
    ["127.0.0.1", "127.0.0.1:1", "localhost:65000", "[::1]:8080", "127.5.6.7:80", "a.localhost"],
)
def test_loopback_hosts_are_allowed_on_any_port(header: str) -> None:
    assert HostPolicy().allows(header)


@pytest.mark.parametrize(
    "header",
    ["evil.example", "evil.example:8123", "10.0.0.5:8123", "127.0.0.1.evil.example", "", None],
)
def test_other_hosts_are_refused_by_default(header: str | None) -> None:
    assert not HostPolicy().allows(header)


def test_configured_names_and_star_widen_the_policy() -> None:
    assert HostPolicy(["Desk.Example"]).allows("desk.example:443")
    assert not HostPolicy(["desk.example"]).allows("other.example")
    assert HostPolicy(["*"]).allows("anything.example")


@pytest.mark.parametrize("path", ["/api/health", "/", "/sw.js", "/api/pty"])
async def test_a_rebound_host_name_gets_403_on_every_route(
    client: TestClient, auth: dict[str, str], path: str
) -> None:
    response = await client.get(path, headers={**auth, "Host": "attacker.example:8123"})
    assert response.status == 403
    body = await response.json()
    assert body["error"]["type"] == "host.forbidden"
    assert "DESK_ALLOWED_HOSTS" in body["error"]["message"]


async def test_a_rebound_host_cannot_write_preferences(
    client: TestClient, auth: dict[str, str]
) -> None:
    evil = {**auth, "Host": "attacker.example"}
    refused = await client.put("/api/ui/prefs/theme", json={"value": "x"}, headers=evil)
    assert refused.status == 403
    stored = await client.get("/api/ui/prefs/theme", headers=auth)
    assert (await stored.json())["data"]["value"] is None


async def test_localhost_on_another_port_is_served(
    client: TestClient, auth: dict[str, str]
) -> None:
    response = await client.get("/api/health", headers={**auth, "Host": "localhost:40999"})
    assert response.status == 200


async def test_desk_allowed_hosts_admits_a_deliberate_remote_name(
    aiohttp_client: ClientFactory, settings: Settings, web_dist: Path, auth: dict[str, str]
) -> None:
    remote = replace(settings, allowed_hosts=("desk.lan",))
    client = await aiohttp_client(create_app(remote, token=TOKEN))
    allowed = await client.get("/api/health", headers={**auth, "Host": "desk.lan:8123"})
    assert allowed.status == 200
    refused = await client.get("/api/health", headers={**auth, "Host": "other.lan"})
    assert refused.status == 403


def test_allowed_hosts_come_from_the_environment(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desktop.config import load_settings

    monkeypatch.setenv("DESK_ALLOWED_HOSTS", "desk.lan, build-box")
    assert HostPolicy(load_settings().allowed_hosts).allows("build-box:9")
