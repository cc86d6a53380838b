"""Lowered histories sent through the real client to the strict fake: zero invalid requests."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from desktop.agent.lowering import LoweringOptions, lower_messages
from desktop.provider.client import ChatClient, collect
from desktop.provider.profiles import make_profile
from desktop.provider.stream import Finish
from tests.support.fake_provider import FakeProvider


def crash_history() -> list[dict[str, Any]]:
    """A shell call cut by a restart, a notice, the next prompt."""
    return [
        {"id": "u1", "type": "user", "text": "build it", "time": 1},
        {
            "id": "a1",
            "type": "assistant",
            "agent": "build",
            "model": {"id": "m", "provider_id": "p"},
            "time": {"created": 1},
            "content": [
                {"type": "reasoning", "text": "I will run the build."},
                {"type": "text", "text": "Running the build."},
                {
                    "type": "tool",
                    "id": "call_Zk3nB0x9sQ2",
                    "name": "shell",
                    "time": {"created": 1},
                    "state": {"status": "running", "input": {"command": "sleep 5; echo done"}},
                },
                {
                    "type": "tool",
                    "id": "call_second",
                    "name": "read",
                    "time": {"created": 1},
                    "state": {"status": "completed", "input": {"path": "a"}, "content": "1\ta"},
                },
            ],
        },
        {
            "id": "s1",
            "type": "synthetic",
            "text": "The server restarted while you were working...",
            "description": "restart",
            "metadata": {},
            "time": 2,
        },
        {"id": "u2", "type": "user", "text": "and now?", "time": 3},
    ]


@pytest.mark.parametrize("mistral", [False, True])
async def test_crash_history_lowered_is_accepted_by_the_strict_fake(mistral: bool) -> None:
    async with FakeProvider(mistral=mistral) as fake:
        chat = ChatClient(
            make_profile(
                "openai-compatible",
                base_url=fake.base_url,
                model="devstral" if mistral else "qwen3",
                mistral=mistral,
            )
        )
        messages = lower_messages(
            crash_history(), LoweringOptions(mistral=mistral, system="You are Desk.")
        )
        events = await collect(chat.stream(messages))
        await chat.close()
        assert events[-1] == Finish("stop")
        assert fake.invalid_count == 0
        sent = fake.requests[0].body["messages"]
        roles = [m["role"] for m in sent]
        expected = ["system", "user", "assistant", "tool", "tool"]
        expected += ["assistant", "user", "user"] if mistral else ["user", "user"]
        assert roles == expected
        assert sent[3]["content"] == "Tool execution interrupted: shell"


async def test_the_same_history_unlowered_the_naive_way_is_what_the_fake_rejects() -> None:
    """The fake really is strict: the ordering a restart once produced (a notice between a
    call and its result) is answered 400, so the zero above means something."""
    async with FakeProvider() as fake:
        naive = [
            {"role": "user", "content": "build it"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "shell", "arguments": "{}"},
                    }
                ],
            },
            {"role": "user", "content": "The server restarted while you were working..."},
            {"role": "tool", "tool_call_id": "call_1", "content": "interrupted"},
        ]
        async with (
            aiohttp.ClientSession() as http,
            http.post(
                fake.base_url + "/chat/completions",
                json={"model": "m", "messages": naive, "stream": True},
            ) as response,
        ):
            assert response.status == 400
        assert fake.invalid_count == 1
