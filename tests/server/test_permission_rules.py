"""Permission rules and the built-in secret rules, end to end: a real in-process service, the
strict fake as the model, real shell jobs in the PTY host.

- `git *` allowed, `rm *` denied, `ls *` asked, in `ask` mode: the denied command never runs;
- in `auto` mode an `ask` rule still asks;
- `.env` read, grep, glob and `cat .env` in `auto` mode: the secret is in no request the
  provider receives and in none of the session's messages;
- "allow for this session" allows the pattern shown on the card, not the whole tool;
- GET/PUT /api/config/permissions: the rules file is private, bad rules change nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from desktop.config import Settings
from tests.support.app import TOKEN
from tests.support.fake_provider import Call, FakeProvider, text_reply, tool_call_reply
from tests.support.runner import (
    messages,
    new_session,
    prompt,
    until_event,
    until_idle,
)
from tests.support.wait import wait_for

AUTH = {"Authorization": f"Bearer {TOKEN}"}
SECRET = "sk-live-0123456789-the-secret-value"


async def put_rules(client: TestClient, rules: list[dict[str, str]]) -> dict[str, Any]:
    response = await client.put("/api/config/permissions", json={"rules": rules}, headers=AUTH)
    assert response.status == 200, await response.text()
    return dict((await response.json())["data"])


async def pending(client: TestClient, sid: str, count: int) -> list[dict[str, Any]]:
    async def found() -> list[dict[str, Any]] | None:
        response = await client.get(f"/api/session/{sid}/permission", headers=AUTH)
        items = list((await response.json())["data"])
        return items if len(items) >= count else None

    return await wait_for(found, 30, f"{count} permission requests", 0.02)  # type: ignore[no-any-return]


async def reply(client: TestClient, sid: str, call_id: str, answer: str) -> None:
    response = await client.post(
        f"/api/session/{sid}/permission/{call_id}", json={"reply": answer}, headers=AUTH
    )
    assert response.status == 200, await response.text()


def results(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each call's ending event by call id."""
    ends = ("session.tool.success", "session.tool.failed")
    return {e["data"]["call_id"]: e for e in events if e["type"] in ends}


async def test_allow_deny_and_ask_rules_decide_shell_calls_in_ask_mode(
    agent: TestClient, fake: FakeProvider, tmp_path: Path
) -> None:
    (tmp_path / "keep.txt").write_text("precious\n")
    await put_rules(
        agent,
        [
            {"tool": "shell", "pattern": "git *", "action": "allow"},
            {"tool": "shell", "pattern": "rm *", "action": "deny"},
            {"tool": "shell", "pattern": "ls *", "action": "ask"},
        ],
    )
    fake.script(
        tool_call_reply(
            Call("c_git", "shell", {"command": "git --version"}),
            Call("c_rm", "shell", {"command": "rm keep.txt"}),
            Call("c_ls", "shell", {"command": "ls"}),
        ),
        text_reply("done"),
    )
    sid = await new_session(agent, AUTH, str(tmp_path))
    response = await agent.patch(
        f"/api/session/{sid}", json={"permission_mode": "ask"}, headers=AUTH
    )
    assert response.status == 200
    await prompt(agent, AUTH, sid, "go")
    [asked] = await pending(agent, sid, 1)
    assert asked["input"]["command"] == "ls"  # git ran unasked, rm was refused unasked
    assert asked["pattern"] == "ls *"
    await reply(agent, sid, asked["call_id"], "once")
    await until_idle(agent, AUTH, sid)
    events = await until_event(agent, AUTH, sid, "session.step.ended", 2)
    ended = results(events)
    assert ended["c_git"]["type"] == "session.tool.success"
    assert "git version" in ended["c_git"]["data"]["content"]
    assert ended["c_rm"]["data"]["error"]["type"] == "permission.denied"
    assert "rm *" in ended["c_rm"]["data"]["error"]["message"]
    assert ended["c_ls"]["type"] == "session.tool.success"
    assert (tmp_path / "keep.txt").read_text() == "precious\n"
    assert fake.invalid_count == 0


async def test_an_ask_rule_asks_in_auto_mode_too(
    agent: TestClient, fake: FakeProvider, tmp_path: Path
) -> None:
    await put_rules(agent, [{"tool": "write", "pattern": "src/**", "action": "ask"}])
    fake.script(
        tool_call_reply(Call("c_w", "write", {"path": "src/a.txt", "content": "x"})),
        text_reply("done"),
    )
    sid = await new_session(agent, AUTH, str(tmp_path))
    await prompt(agent, AUTH, sid, "go")
    [asked] = await pending(agent, sid, 1)
    assert (asked["tool"], asked["pattern"]) == ("write", "src/**")
    assert not (tmp_path / "src/a.txt").exists()
    await reply(agent, sid, asked["call_id"], "deny")
    await until_idle(agent, AUTH, sid)
    assert not (tmp_path / "src/a.txt").exists()


async def test_secret_files_never_reach_the_provider_nor_the_messages_in_auto_mode(
    agent: TestClient, fake: FakeProvider, tmp_path: Path
) -> None:
    (tmp_path / ".env").write_text(f"API_KEY={SECRET}\n")
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "server.pem").write_text(f"-----BEGIN {SECRET}-----\n")
    (tmp_path / ".env.example").write_text("API_KEY=put-yours-here\n")
    fake.script(
        tool_call_reply(
            Call("c_read", "read", {"path": ".env"}),
            Call("c_read2", "read", {"path": f"{tmp_path}/conf/server.pem"}),
            Call("c_grep", "grep", {"pattern": "API_KEY|BEGIN"}),
            Call("c_glob", "glob", {"pattern": "**/*"}),
            Call("c_ex", "read", {"path": ".env.example"}),
            Call("c_cat", "shell", {"command": "cat .env"}),
        ),
        text_reply("done"),
    )
    sid = await new_session(agent, AUTH, str(tmp_path))
    await prompt(agent, AUTH, sid, "show me the keys")
    [asked] = await pending(agent, sid, 1)  # auto mode, yet the shell call naming .env asks
    assert asked["input"]["command"] == "cat .env"
    await reply(agent, sid, asked["call_id"], "deny")
    await until_idle(agent, AUTH, sid)
    events = await until_event(agent, AUTH, sid, "session.step.ended", 2)
    ended = results(events)
    for call in ("c_read", "c_read2", "c_cat"):
        assert ended[call]["data"]["error"]["type"] == "permission.denied", call
    grep = ended["c_grep"]["data"]["content"]
    assert ".env.example:1:API_KEY=put-yours-here" in grep
    assert "server.pem" not in grep
    assert ".env:" not in grep.replace(".env.example:", "")
    listed = ended["c_glob"]["data"]["content"].splitlines()
    assert ".env.example" in listed
    assert ".env" not in listed
    assert "conf/server.pem" not in listed
    assert "put-yours-here" in ended["c_ex"]["data"]["content"]
    assert len(fake.requests) == 2
    for request in fake.requests:
        assert SECRET not in json.dumps(request.body)
    assert SECRET not in json.dumps(await messages(agent, AUTH, sid))
    assert fake.invalid_count == 0


async def test_allow_for_this_session_allows_the_pattern_on_the_card_not_the_tool(
    agent: TestClient, fake: FakeProvider, tmp_path: Path
) -> None:
    fake.script(
        tool_call_reply(Call("c1", "shell", {"command": "git --version"})),
        tool_call_reply(Call("c2", "shell", {"command": "git --help"})),
        tool_call_reply(Call("c3", "shell", {"command": "echo hi"})),
        text_reply("done"),
    )
    sid = await new_session(agent, AUTH, str(tmp_path))
    response = await agent.patch(
        f"/api/session/{sid}", json={"permission_mode": "ask"}, headers=AUTH
    )
    assert response.status == 200
    await prompt(agent, AUTH, sid, "go")
    [first] = await pending(agent, sid, 1)
    assert first["pattern"] == "git *"
    await reply(agent, sid, first["call_id"], "session")
    [third] = await pending(agent, sid, 1)  # git --help ran unasked; echo is asked
    assert third["input"]["command"] == "echo hi"
    await reply(agent, sid, third["call_id"], "once")
    await until_idle(agent, AUTH, sid)
    events = await until_event(agent, AUTH, sid, "session.permission.asked", 2)
    assert [e["data"]["input"]["command"] for e in events if e["type"].endswith(".asked")] == [
        "git --version",
        "echo hi",
    ]


async def test_the_rules_route_keeps_them_private_and_refuses_bad_ones(
    agent: TestClient, settings: Settings
) -> None:
    response = await agent.get("/api/config/permissions", headers=AUTH)
    data = (await response.json())["data"]
    assert data["rules"] == []
    assert {"tool": "glob", "pattern": "**/*.pem", "action": "deny"} in data["defaults"]
    saved = await put_rules(agent, [{"tool": "shell", "pattern": "npm run *", "action": "allow"}])
    assert saved["rules"] == [{"tool": "shell", "pattern": "npm run *", "action": "allow"}]
    path = settings.data_dir / "permissions.json"
    assert path.stat().st_mode & 0o777 == 0o600
    before = path.read_bytes()
    bodies: list[dict[str, object]] = [
        {"rules": [{"tool": "shell", "pattern": "x", "action": "never"}]},
        {"rules": "all"},
        {"rulez": []},
        {},
    ]
    for body in bodies:
        response = await agent.put("/api/config/permissions", json=body, headers=AUTH)
        assert response.status == 400, body
        assert (await response.json())["error"]["type"] == "request.invalid"
    assert path.read_bytes() == before
