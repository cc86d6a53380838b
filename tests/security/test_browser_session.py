"""The browser's cookie is a revocable session id, never the service token: cookies ignore
ports, so every server on 127.0.0.1 (a project's own dev server) receives them."""

from __future__ import annotations

import stat
from pathlib import Path

from aiohttp.test_utils import TestClient

from desktop.config import Settings
from desktop.server.app import create_app
from desktop.server.auth import COOKIE_NAME
from tests.support.app import TOKEN, ClientFactory


async def sign_in(client: TestClient) -> str:
    response = await client.get(f"/?token={TOKEN}", allow_redirects=False)
    assert response.status == 303
    return response.cookies[COOKIE_NAME].value


async def test_the_cookie_a_login_sets_is_not_the_token_and_the_token_as_a_cookie_is_refused(
    client: TestClient,
) -> None:
    session_id = await sign_in(client)
    assert TOKEN not in session_id
    assert len(session_id) >= 40
    assert (await client.get("/api/health")).status == 200
    client.session.cookie_jar.clear()
    for cookie in (f"{COOKIE_NAME}={TOKEN}", f"desk_token={TOKEN}"):
        refused = await client.get("/api/health", headers={"Cookie": cookie})
        assert refused.status == 401


async def test_each_login_is_its_own_session_and_signing_out_revokes_only_it(
    client: TestClient, auth: dict[str, str]
) -> None:
    first = await sign_in(client)
    second = await sign_in(client)
    assert first != second
    client.session.cookie_jar.clear()
    out = await client.delete("/api/auth/session", headers={"Cookie": f"{COOKIE_NAME}={first}"})
    assert (await out.json())["data"] == {"revoked": True}
    gone = await client.get("/api/health", headers={"Cookie": f"{COOKIE_NAME}={first}"})
    assert gone.status == 401
    kept = await client.get("/api/health", headers={"Cookie": f"{COOKIE_NAME}={second}"})
    assert kept.status == 200
    assert (await client.get("/api/health", headers=auth)).status == 200  # the token still


async def test_sessions_survive_a_restart_and_are_stored_only_as_hashes(
    aiohttp_client: ClientFactory, settings: Settings, web_dist: Path
) -> None:
    first = await aiohttp_client(create_app(settings, token=TOKEN))
    session_id = await sign_in(first)
    await first.close()
    stored = settings.browser_sessions_path
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert session_id not in stored.read_text()
    assert TOKEN not in stored.read_text()
    second = await aiohttp_client(create_app(settings, token=TOKEN))
    again = await second.get("/api/health", headers={"Cookie": f"{COOKIE_NAME}={session_id}"})
    assert again.status == 200
