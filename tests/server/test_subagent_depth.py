"""Subagents nest one level deep, and a child can be continued by its session id: a real
in-process service with the strict fake as the model of parent and children alike."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from tests.support.app import TOKEN
from tests.support.fake_provider import Call, FakeProvider, Reply, text_reply, tool_call_reply
from tests.support.runner import messages, new_session, prompt, until_event, until_idle

AUTH = {"Authorization": f"Bearer {TOKEN}"}
HELPER_ID = re.compile(r"helper session_id: (ses_[A-Za-z0-9]+)")


def tool_names(body: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in body.get("tools", [])}


def results(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    ends = ("session.tool.success", "session.tool.failed")
    return {e["data"]["call_id"]: e for e in events if e["type"] in ends}


async def children(client: TestClient, sid: str) -> list[str]:
    listed = (await (await client.get("/api/session", headers=AUTH)).json())["data"]
    return [str(s["id"]) for s in listed if s.get("parent_id") == sid]


async def test_a_subagent_is_not_offered_subagent_and_cannot_start_one(
    agent: TestClient, fake: FakeProvider, tmp_path: Path
) -> None:
    fake.script(
        tool_call_reply(Call("c_p", "subagent", {"description": "look", "prompt": "look"})),
        tool_call_reply(Call("c_c", "subagent", {"description": "deeper", "prompt": "go on"})),
        text_reply("the child's answer"),
        text_reply("done"),
    )
    sid = await new_session(agent, AUTH, str(tmp_path))
    await prompt(agent, AUTH, sid, "go")
    await until_idle(agent, AUTH, sid)
    await until_event(agent, AUTH, sid, "session.tool.success", call_id="c_p")
    [child] = await children(agent, sid)
    assert await children(agent, child) == []
    parent_request, child_request = fake.requests[0].body, fake.requests[1].body
    assert "subagent" in tool_names(parent_request)
    assert "subagent" not in tool_names(child_request)
    assert tool_names(child_request) >= {"read", "shell"}
    child_events = await until_event(agent, AUTH, child, "session.tool.failed", call_id="c_c")
    refused = results(child_events)["c_c"]["data"]["error"]["message"]
    assert "helpers cannot start helpers" in refused
    assert fake.invalid_count == 0


async def test_continuing_a_child_by_id_keeps_its_history(
    agent: TestClient, fake: FakeProvider, tmp_path: Path
) -> None:
    continued: list[str] = []

    def route(body: Any) -> Reply | None:
        last = body["messages"][-1]
        found = HELPER_ID.search(str(last.get("content", ""))) if last["role"] == "tool" else None
        if found is None or continued:
            return None
        continued.append(found.group(1))
        args = {"description": "again", "prompt": "task two", "session_id": found.group(1)}
        return tool_call_reply(Call("c_again", "subagent", args))

    fake.route = route
    fake.script(
        tool_call_reply(Call("c_first", "subagent", {"description": "one", "prompt": "task one"})),
        text_reply("answer one"),
        text_reply("answer two"),
        text_reply("all done"),
    )
    sid = await new_session(agent, AUTH, str(tmp_path))
    await prompt(agent, AUTH, sid, "go")
    events = await until_event(agent, AUTH, sid, "session.tool.success", call_id="c_again")
    await until_idle(agent, AUTH, sid)
    [child] = await children(agent, sid)
    assert continued == [child]
    assert "answer two" in results(events)["c_again"]["data"]["content"]
    second = [r.body for r in fake.requests if "task two" in json.dumps(r.body["messages"][-1])]
    assert len(second) == 1
    said = [(m["role"], m.get("content")) for m in second[0]["messages"][1:]]
    assert said == [("user", "task one"), ("assistant", "answer one"), ("user", "task two")]
    texts = [m.get("text") for m in await messages(agent, AUTH, child) if m["type"] == "user"]
    assert texts == ["task one", "task two"]
    assert fake.invalid_count == 0


async def test_a_session_id_that_is_not_a_child_is_refused(
    agent: TestClient, fake: FakeProvider, tmp_path: Path
) -> None:
    other = await new_session(agent, AUTH, str(tmp_path))
    args = {"description": "x", "prompt": "p", "session_id": other}
    fake.script(tool_call_reply(Call("c_x", "subagent", args)), text_reply("ok"))
    sid = await new_session(agent, AUTH, str(tmp_path))
    await prompt(agent, AUTH, sid, "go")
    events = await until_event(agent, AUTH, sid, "session.tool.failed", call_id="c_x")
    assert "is not a helper of this session" in results(events)["c_x"]["data"]["error"]["message"]
    await until_idle(agent, AUTH, sid)
    assert await messages(agent, AUTH, other) == []
