"""Model output that is not text (a lone surrogate) becomes U+FFFD instead of killing the
turn, and any failure of a turn is a durable, visible `session.step.failed`."""

from __future__ import annotations

from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient

from desktop.agent import runner as runner_module
from desktop.provider.stream import TextDelta, ToolCall, parse_stream
from tests.support.app import TOKEN
from tests.support.fake_provider import FakeProvider, text_reply
from tests.support.runner import (
    log,
    messages,
    new_session,
    prompt,
    until_event,
    until_idle,
)

AUTH = {"Authorization": f"Bearer {TOKEN}"}


def sse(payload: str) -> bytes:
    return f"data: {payload}\n\n".encode()


def test_a_lone_surrogate_in_a_chunk_becomes_a_replacement_character() -> None:
    events = parse_stream(
        [
            sse('{"choices":[{"delta":{"content":"a\\ud800b \\ud83d\\ude00"}}]}'),
            sse(
                '{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c\\udfff",'
                '"type":"function","function":{"name":"read",'
                '"arguments":"{\\"path\\": \\"\\udc00\\"}"}}]}}]}'
            ),
            sse('{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}'),
            b"data: [DONE]\n\n",
        ]
    )
    [text] = [e for e in events if isinstance(e, TextDelta)]
    [call] = [e for e in events if isinstance(e, ToolCall)]
    assert text.text == "a\ufffdb \U0001f600"
    assert "\ufffd" in call.arguments
    for value in (text.text, call.id, call.name, call.arguments):
        value.encode("utf-8")  # real text: storable, sendable


async def test_a_lone_surrogate_in_the_answer_is_shown_as_a_replacement_and_the_turn_ends(
    agent: TestClient, fake: FakeProvider, tmp_path: Path
) -> None:
    fake.script(text_reply("bad \ud800 char"), text_reply("next"))
    sid = await new_session(agent, AUTH, str(tmp_path))
    await prompt(agent, AUTH, sid, "hi")
    await until_event(agent, AUTH, sid, "session.step.ended")
    await until_idle(agent, AUTH, sid)
    answer = (await messages(agent, AUTH, sid))[-1]
    assert answer["content"][0]["text"] == "bad \ufffd char"
    await prompt(agent, AUTH, sid, "again")  # the session goes on
    await until_event(agent, AUTH, sid, "session.step.ended", count=2)
    assert fake.invalid_count == 0


async def test_any_failure_of_a_turn_is_a_durable_visible_step_failure(
    agent: TestClient, fake: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> str:
        raise RuntimeError("the prompt could not be built")

    monkeypatch.setattr(runner_module, "system_prompt", broken)
    sid = await new_session(agent, AUTH, str(tmp_path))
    await prompt(agent, AUTH, sid, "hi")
    events = await until_event(agent, AUTH, sid, "session.step.failed")
    [failed] = [e for e in events if e["type"] == "session.step.failed"]
    assert failed["data"]["error"]["type"] == "internal"
    assert "the prompt could not be built" in failed["data"]["error"]["message"]
    session = await until_idle(agent, AUTH, sid)
    assert session["status"] == "error"
    monkeypatch.undo()
    fake.script(text_reply("recovered"))
    await prompt(agent, AUTH, sid, "again")
    await until_event(agent, AUTH, sid, "session.step.ended")
    assert [e["type"] for e in await log(agent, AUTH, sid)].count("session.step.failed") == 1
