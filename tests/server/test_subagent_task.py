"""A subagent's task is recorded as its parent's, not the person's: the prompt the parent's
agent wrote for a child carries `from_session` (the parent) in its event and its message,
while a prompt the person types into the child has none."""

from __future__ import annotations

from pathlib import Path

from aiohttp.test_utils import TestClient

from tests.support.app import TOKEN
from tests.support.fake_provider import Call, FakeProvider, text_reply, tool_call_reply
from tests.support.runner import log, messages, new_session, prompt, until_event, until_idle

AUTH = {"Authorization": f"Bearer {TOKEN}"}


async def test_the_childs_task_names_the_parent_session_and_the_persons_prompt_does_not(
    agent: TestClient, fake: FakeProvider, tmp_path: Path
) -> None:
    task = {"description": "count files", "prompt": "Count the files here."}
    fake.script(
        tool_call_reply(Call("c_1", "subagent", task)),
        text_reply("three files"),
        text_reply("The helper counted three."),
        text_reply("hi"),
    )
    sid = await new_session(agent, AUTH, str(tmp_path))
    await prompt(agent, AUTH, sid, "delegate it")
    await until_event(agent, AUTH, sid, "session.tool.success", call_id="c_1")
    await until_idle(agent, AUTH, sid)
    listed = (await (await agent.get("/api/session", headers=AUTH)).json())["data"]
    [child] = [s["id"] for s in listed if s.get("parent_id") == sid]

    [given] = [m for m in await messages(agent, AUTH, child) if m["type"] == "user"]
    assert given["text"] == "Count the files here."
    assert given["from_session"] == sid
    prompted = [e for e in await log(agent, AUTH, child) if e["type"] == "session.prompted"]
    assert prompted[0]["data"]["from_session"] == sid
    # The person's own prompts carry no origin, in the parent and in the child.
    assert "from_session" not in (await messages(agent, AUTH, sid))[0]
    await prompt(agent, AUTH, child, "and hello")
    await until_idle(agent, AUTH, child)
    typed = [m for m in await messages(agent, AUTH, child) if m["type"] == "user"][-1]
    assert typed["text"] == "and hello"
    assert "from_session" not in typed
    assert fake.invalid_count == 0
