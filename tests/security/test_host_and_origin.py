"""The Host header is parsed strictly (`127.0.0.1:PORT@evil` names no host) and a WebSocket
upgrade asked for by a page of another origin is refused before anything else runs."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp.test_utils import TestClient

from desktop.server.hosts import HostPolicy


@pytest.mark.parametrize(
    "header",
    [
        "127.0.0.1:8080@evil.example",
        "127.0.0.1@evil.example",
        "localhost:80@evil.example",
        "127.0.0.1 evil.example",
        "127.0.0.1:8080:evil",
        "127.0.0.1:",
        "[::1]@evil",
        "127.0.0.1/evil",
    ],
)
def test_a_host_header_that_is_not_exactly_name_and_port_is_refused(header: str) -> None:
    assert not HostPolicy().allows(header)
    assert not HostPolicy(["desk.example"]).allows(header)


async def raw_get(client: TestClient, host: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", client.server.port)
    writer.write(b"GET / HTTP/1.1\r\nHost: " + host + b"\r\nConnection: close\r\n\r\n")
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    return answer


async def test_the_service_refuses_a_host_with_a_trailing_at_name(client: TestClient) -> None:
    port = str(client.server.port).encode()
    refused = await raw_get(client, b"127.0.0.1:" + port + b"@evil.example")
    assert refused.startswith(b"HTTP/1.1 403")
    assert (await raw_get(client, b"127.0.0.1:" + port)).startswith(b"HTTP/1.1 200")


def upgrade(origin: str | None) -> dict[str, str]:
    headers = {
        "Upgrade": "websocket",
        "Connection": "Upgrade",
        "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
    }
    if origin is not None:
        headers["Origin"] = origin
    return headers


async def test_a_websocket_upgrade_from_another_origin_is_refused(
    api: TestClient, auth: dict[str, str]
) -> None:
    client = api
    own = f"http://127.0.0.1:{client.server.port}"
    for path in ("/api/pty/pty_x/connect?ticket=abc", "/api/pty/pty_x/connect"):
        foreign = await client.get(path, headers={**auth, **upgrade("http://evil.example")})
        assert foreign.status == 403
        assert (await foreign.json())["error"]["message"] == "Cross-origin WebSocket refused."
        for origin in (own, None):
            answer = await client.get(path, headers={**auth, **upgrade(origin)})
            assert "Cross-origin" not in await answer.text()
