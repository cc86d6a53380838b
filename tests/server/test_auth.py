"""Token auth: Bearer, cookie login through /?token=, 401s, token file mode."""

from __future__ import annotations

import stat
from pathlib import Path

from aiohttp.test_utils import TestClient

from desktop.server.auth import COOKIE_NAME, load_or_create_token
from tests.support.app import TOKEN


async def test_api_requires_a_token(client: TestClient) -> None:
    for headers in [{}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic abc"}]:
        response = await client.get("/api/health", headers=headers)
        assert response.status == 401
        body = await response.json()
        assert body["error"]["type"] == "auth.required"
        assert TOKEN not in await response.text()


async def test_bearer_token_is_accepted(client: TestClient, auth: dict[str, str]) -> None:
    response = await client.get("/api/health", headers=auth)
    assert response.status == 200
    data = (await response.json())["data"]
    assert data["status"] == "ok"
    assert isinstance(data["pid"], int)


async def test_login_sets_httponly_strict_cookie_and_redirects(client: TestClient) -> None:
    response = await client.get(f"/?token={TOKEN}", allow_redirects=False)
    assert response.status == 303
    assert response.headers["Location"] == "/"
    cookie = response.cookies[COOKIE_NAME]
    assert cookie.value  # a browser session id, never the token (tests/security)
    assert cookie.value != TOKEN
    assert cookie["httponly"]
    assert cookie["samesite"] == "Strict"
    # The client's jar now carries the cookie: the API answers without a header.
    response = await client.get("/api/health")
    assert response.status == 200


async def test_wrong_login_token_sets_no_cookie(client: TestClient) -> None:
    response = await client.get("/?token=nope", allow_redirects=False)
    assert response.status == 303
    assert COOKIE_NAME not in response.cookies
    assert (await client.get("/api/health")).status == 401


async def test_cookie_auth_refuses_cross_origin_writes(client: TestClient) -> None:
    await client.get(f"/?token={TOKEN}", allow_redirects=False)
    response = await client.put(
        "/api/ui/prefs/theme", json={"value": "dark"}, headers={"Origin": "http://evil.example"}
    )
    assert response.status == 403
    same = await client.get("/api/ui/prefs/theme")
    assert (await same.json())["data"]["value"] is None


async def test_ui_shell_is_public(client: TestClient) -> None:
    for path in ["/", "/index.html", "/sw.js", "/_assets/app-3f2a1b.js", "/manifest.webmanifest"]:
        assert (await client.get(path)).status == 200, path


def test_token_file_is_private_and_stable(tmp_path: Path) -> None:
    path = tmp_path / "auth-token"
    first = load_or_create_token(path)
    assert len(first) >= 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_or_create_token(path) == first
    path.chmod(0o644)
    assert load_or_create_token(path) == first
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
