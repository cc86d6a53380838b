"""Project instructions reach the model: through the real app and the strict fake provider."""

from __future__ import annotations

from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient

from tests.support.app import TOKEN
from tests.support.fake_provider import Call, FakeProvider, text_reply, tool_call_reply
from tests.support.runner import new_session, prompt, until_event, until_idle

AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The session's folder, two levels under a repository root, with a global file."""
    config = tmp_path / "config"
    (config / "desk").mkdir(parents=True)
    (config / "desk" / "AGENTS.md").write_text("GLOBAL: be brief")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("ROOT: run make test")
    (root / "lib").mkdir()
    (root / "lib" / "CLAUDE.md").write_text("LIB: typed code only")
    folder = root / "lib" / "app"
    folder.mkdir()
    (folder / "AGENTS.md").write_text("APP: agents file")
    (folder / "CLAUDE.md").write_text("APP: claude file")
    return folder


def system_of(fake: FakeProvider, index: int) -> str:
    return str(fake.requests[index].body["messages"][0]["content"])


async def test_the_system_message_carries_every_file_in_order_and_stays_byte_stable(
    agent: TestClient, fake: FakeProvider, project: Path
) -> None:
    (project / "a.txt").write_text("alpha")
    fake.script(tool_call_reply(Call("call_a", "read", {"path": "a.txt"})), text_reply("ok"))
    sid = await new_session(agent, AUTH, str(project))
    await prompt(agent, AUTH, sid, "go")
    await until_event(agent, AUTH, sid, "session.step.ended", count=2)
    await until_idle(agent, AUTH, sid)
    system = system_of(fake, 0)
    order = ["GLOBAL: be brief", "ROOT: run make test", "LIB: typed code only", "APP: agents"]
    assert [system.index(text) for text in order] == sorted(system.index(t) for t in order)
    assert "APP: claude file" not in system
    assert system_of(fake, 1) == system  # two steps of one turn: the same bytes
    listed = await (await agent.get(f"/api/session/{sid}/instructions", headers=AUTH)).json()
    assert [Path(f["path"]).parent.name for f in listed["data"]["files"]] == [
        "desk",
        "repo",
        "lib",
        "app",
    ]
    assert fake.invalid_count == 0


async def test_an_edit_is_seen_at_the_next_prompt_without_a_restart(
    agent: TestClient, fake: FakeProvider, project: Path
) -> None:
    fake.script(text_reply("one"), text_reply("two"))
    sid = await new_session(agent, AUTH, str(project))
    await prompt(agent, AUTH, sid, "first")
    await until_event(agent, AUTH, sid, "session.step.ended")
    await until_idle(agent, AUTH, sid)
    (project / "AGENTS.md").write_text("APP: edited rules")
    await prompt(agent, AUTH, sid, "second")
    await until_event(agent, AUTH, sid, "session.step.ended", count=2)
    assert "APP: agents file" in system_of(fake, 0)
    assert "APP: edited rules" in system_of(fake, 1)
    assert "APP: agents file" not in system_of(fake, 1)


async def test_instructions_of_an_unknown_session_are_a_404(agent: TestClient) -> None:
    for sid in ("ses_doesnotexist", "not an id"):
        response = await agent.get(f"/api/session/{sid}/instructions", headers=AUTH)
        assert response.status == 404
        assert (await response.json())["error"]["type"] == "session.not_found"
