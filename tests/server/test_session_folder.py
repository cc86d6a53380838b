"""A session's folder as a person types it: `~` and `~/x` are the service user's home (and a
folder under it), `GET /api/folder` names the service's own folder (a session's default) and
where a typed path leads, and a path that leads nowhere is still a clear 400."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    (folder / "project").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(folder))
    return folder


async def create(
    client: TestClient, auth: dict[str, str], **body: object
) -> tuple[int, dict[str, Any]]:
    response = await client.post("/api/session", json=body, headers=auth)
    answer: dict[str, Any] = await response.json()
    return response.status, answer


async def resolve(client: TestClient, auth: dict[str, str], **query: str) -> dict[str, Any]:
    response = await client.get("/api/folder", params=query, headers=auth)
    assert response.status == 200
    answer: dict[str, Any] = (await response.json())["data"]
    return answer


async def test_a_folder_under_the_tilde_is_created_in_the_service_users_home(
    client: TestClient, auth: dict[str, str], home: Path
) -> None:
    status, body = await create(client, auth, directory="~/project")
    assert status == 201, body
    assert body["data"]["directory"] == str(home / "project")


async def test_the_tilde_alone_is_the_home_folder_and_asks_for_confirmation(
    client: TestClient, auth: dict[str, str], home: Path
) -> None:
    status, body = await create(client, auth, directory="~")
    assert status == 409
    assert body["error"]["type"] == "session.confirm_folder"
    assert str(home) in body["error"]["message"]
    status, body = await create(client, auth, directory="~", confirm=True)
    assert status == 201
    assert body["data"]["directory"] == str(home)


@pytest.mark.parametrize("typed", ["~/missing", "~nobody-here/x", "relative/missing"])
async def test_a_path_that_leads_nowhere_is_a_400_naming_the_folder(
    client: TestClient, auth: dict[str, str], home: Path, typed: str
) -> None:
    status, body = await create(client, auth, directory=typed)
    assert status == 400
    assert body["error"]["type"] == "request.invalid"
    assert "is not an existing folder" in body["error"]["message"]
    if typed == "~/missing":  # named where it led, not as typed
        assert str(home / "missing") in body["error"]["message"]
    sessions = await (await client.get("/api/session", headers=auth)).json()
    assert sessions["data"] == []


async def test_the_folder_route_names_the_services_folder_and_where_a_path_leads(
    client: TestClient,
    auth: dict[str, str],
    home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    served = tmp_path / "served"
    served.mkdir()
    monkeypatch.chdir(served)
    assert await resolve(client, auth) == {"default": str(served)}
    assert await resolve(client, auth, path="~") == {
        "default": str(served),
        "path": str(home),
        "exists": True,
    }
    found = await resolve(client, auth, path="~/project/../project")
    assert (found["path"], found["exists"]) == (str(home / "project"), True)
    missing = await resolve(client, auth, path="~/nope")
    assert (missing["path"], missing["exists"]) == (str(home / "nope"), False)
    relative = await resolve(client, auth, path="sub")
    assert (relative["path"], relative["exists"]) == (str(served / "sub"), False)


async def test_the_folder_route_refuses_an_over_long_path(
    client: TestClient, auth: dict[str, str]
) -> None:
    response = await client.get("/api/folder", params={"path": "x" * 5000}, headers=auth)
    assert response.status == 400
    assert (await response.json())["error"]["type"] == "request.invalid"


async def test_the_folder_route_needs_the_token(client: TestClient) -> None:
    response = await client.get("/api/folder")
    assert response.status == 401


async def test_a_path_with_a_nul_character_is_a_400_on_both_routes(
    client: TestClient, auth: dict[str, str], home: Path
) -> None:
    status, body = await create(client, auth, directory="~/pro\x00ject")
    assert status == 400, body
    assert "NUL" in body["error"]["message"]
    response = await client.get("/api/folder", params={"path": "/tmp/a\x00b"}, headers=auth)
    assert response.status == 400
    assert "NUL" in (await response.json())["error"]["message"]
    listed = await client.get("/api/session", headers=auth)
    assert (await listed.json())["data"] == []
