"""A session whose folder is the person's whole home folder (the service's default working
directory when started from a desktop) or `/` is created only once the person confirmed it:
every tool of the session could reach all of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


async def create(
    client: TestClient, auth: dict[str, str], **body: object
) -> tuple[int, dict[str, Any]]:
    response = await client.post("/api/session", json=body, headers=auth)
    answer: dict[str, Any] = await response.json()
    return response.status, answer


async def count(client: TestClient, auth: dict[str, str]) -> int:
    return len((await (await client.get("/api/session", headers=auth)).json())["data"])


@pytest.mark.parametrize("which", ["home", "root"])
async def test_the_home_folder_or_root_needs_the_persons_confirmation(
    client: TestClient, auth: dict[str, str], home: Path, which: str
) -> None:
    folder = str(home) if which == "home" else "/"
    status, body = await create(client, auth, directory=folder)
    assert status == 409
    assert body["error"]["type"] == "session.confirm_folder"
    assert await count(client, auth) == 0
    status, body = await create(client, auth, directory=folder, confirm=True)
    assert status == 201
    assert body["data"]["directory"] == folder


async def test_the_default_folder_is_checked_too(
    client: TestClient, auth: dict[str, str], home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(home)  # the service started from the home folder
    status, body = await create(client, auth)
    assert status == 409
    assert str(home) in body["error"]["message"]


async def test_an_ordinary_folder_needs_no_confirmation_and_confirm_must_be_a_boolean(
    client: TestClient, auth: dict[str, str], home: Path
) -> None:
    project = home / "project"
    project.mkdir()
    assert (await create(client, auth, directory=str(project)))[0] == 201
    assert (await create(client, auth, directory=str(project), confirm="yes"))[0] == 400
