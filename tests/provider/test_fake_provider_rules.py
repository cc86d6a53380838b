"""The strict fake provider enforces every rule of STRICT-PROVIDER.md, with the real texts.

Each test posts a raw request breaking one rule and checks the 400, the OpenAI error shape,
the exact text and that the fake counted it; a valid twin of each history is accepted, so
a fake that rejected everything would fail here too.
"""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from tests.support.fake_provider import FakeProvider

USER = {"role": "user", "content": "hi"}


def call(
    call_id: str, arguments: Any = "{}", name: Any = "read", call_type: Any = "function"
) -> Any:
    return {"id": call_id, "type": call_type, "function": {"name": name, "arguments": arguments}}


def asst(*calls: Any, content: Any = None) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


def tool(call_id: Any, content: Any = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def body(messages: list[Any], **extra: Any) -> dict[str, Any]:
    return {"model": "fake-model", "messages": messages, "stream": True, **extra}


async def post(fake: FakeProvider, payload: Any) -> tuple[int, Any]:
    async with (
        aiohttp.ClientSession() as http,
        http.post(fake.base_url + "/chat/completions", json=payload) as response,
    ):
        if response.status == 200:
            return 200, await response.text()
        return response.status, await response.json()


async def rejected(fake: FakeProvider, payload: Any, message: str, param: Any = ...) -> None:
    before = fake.invalid_count
    status, answer = await post(fake, payload)
    assert status == 400
    assert set(answer) == {"error"}
    assert set(answer["error"]) == {"message", "type", "param", "code"}
    assert answer["error"]["type"] == "invalid_request_error"
    assert answer["error"]["code"] is None
    assert answer["error"]["message"] == message
    if param is not ...:
        assert answer["error"]["param"] == param
    assert fake.invalid_count == before + 1


async def accepted(fake: FakeProvider, payload: Any) -> None:
    status, text = await post(fake, payload)
    assert status == 200
    assert text.endswith("data: [DONE]\n\n")


async def test_valid_paired_history_streams_and_counts_nothing(fake: FakeProvider) -> None:
    await accepted(
        fake,
        body([USER, asst(call("call_a"), call("call_b")), tool("call_a"), tool("call_b"), USER]),
    )
    assert fake.invalid_count == 0


async def test_rule1_openai_text_lists_the_unanswered_ids(fake: FakeProvider) -> None:
    await rejected(
        fake,
        body([USER, asst(call("call_a"), call("call_b"), call("call_c")), tool("call_b"), USER]),
        "An assistant message with 'tool_calls' must be followed by tool messages responding to "
        "each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        "call_a, call_c",
        "messages.[1].role",
    )


async def test_rule1_unanswered_call_at_the_end_of_history(fake: FakeProvider) -> None:
    await rejected(
        fake,
        body([USER, asst(call("call_x"))]),
        "An assistant message with 'tool_calls' must be followed by tool messages responding to "
        "each 'tool_call_id'. The following tool_call_ids did not have response messages: call_x",
    )


async def test_rule1_deepseek_refuses_a_system_message_between_call_and_answer() -> None:
    async with FakeProvider(rule1="deepseek") as fake:
        await rejected(
            fake,
            body([USER, asst(call("call_x")), {"role": "system", "content": "later"}]),
            "An assistant message with 'tool_calls' must be followed by tool messages responding "
            "to each 'tool_call_id'. (insufficient tool messages following tool_calls message)",
        )


async def test_rule2_tool_message_without_a_preceding_tool_call(fake: FakeProvider) -> None:
    text = (
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
        "message with 'tool_calls'."
    )
    await rejected(fake, body([USER, tool("call_a")]), text, "messages.[1].role")
    # an id of an older assistant message is not "the nearest preceding" one
    await rejected(
        fake,
        body(
            [
                USER,
                asst(call("call_a")),
                tool("call_a"),
                asst(call("call_b")),
                tool("call_b"),
                tool("call_c"),
            ]
        ),
        text,
    )


async def test_rule3_two_answers_to_one_call_are_refused_naming_both(fake: FakeProvider) -> None:
    await rejected(
        fake,
        body([USER, asst(call("call_x")), tool("call_x"), tool("call_x")]),
        "Invalid parameter: Duplicate value for 'tool_call_id' of 'call_x', in messages[2] "
        "and messages[3].",
    )


async def test_rule4_empty_tool_calls(fake: FakeProvider) -> None:
    await rejected(fake, body([USER, asst()]), "Empty tool_calls is not supported in message.")


async def test_rule4_content_is_null_or_string_with_tool_calls(fake: FakeProvider) -> None:
    await rejected(
        fake,
        body([USER, asst(call("call_a"), content=[{"type": "text", "text": "x"}]), tool("call_a")]),
        "Invalid type for 'messages[1].content': expected a string or null when 'tool_calls' is "
        "present.",
    )
    await accepted(fake, body([USER, asst(call("call_a"), content="text"), tool("call_a")]))


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (call(""), "Missing required parameter: 'messages[1].tool_calls[0].id'."),
        (
            {"type": "function", "function": {"name": "r", "arguments": "{}"}},
            "Missing required parameter: 'messages[1].tool_calls[0].id'.",
        ),
        (
            call("call_a", call_type="tool"),
            "Invalid value: \"tool\". Supported values are: 'function'.",
        ),
        (
            call("call_a", name=""),
            "Missing required parameter: 'messages[1].tool_calls[0].function.name'.",
        ),
        (
            call("call_a", arguments={"path": "x"}),
            "Invalid 'messages[1].tool_calls[0].function.arguments': expected a string containing "
            "valid JSON.",
        ),
        (
            call("call_a", arguments='{"path": '),
            "Invalid 'messages[1].tool_calls[0].function.arguments': expected a string containing "
            "valid JSON.",
        ),
    ],
)
async def test_rule5_each_tool_call_field(fake: FakeProvider, bad: Any, message: str) -> None:
    await rejected(fake, body([USER, asst(bad), tool("call_a")]), message)


async def test_rule6_tool_message_needs_an_id_and_string_content(fake: FakeProvider) -> None:
    await rejected(
        fake,
        body(
            [
                USER,
                asst(call("call_a")),
                tool("call_a"),
                asst(call("call_b")),
                {"role": "tool", "content": "x"},
            ]
        ),
        "'messages.4.tool_call_id' : property 'tool_call_id' is missing",
        "messages.4.tool_call_id",
    )
    await rejected(
        fake,
        body([USER, asst(call("call_a")), tool("call_a", content={"x": 1})]),
        "'messages.2.content' : value must be a string",
    )


async def test_rule7_user_after_tool_only_for_mistral(fake: FakeProvider) -> None:
    history = [USER, asst(call("abcDEF123")), tool("abcDEF123"), USER]
    await accepted(fake, body(history))
    async with FakeProvider(mistral=True) as mistral:
        await rejected(mistral, body(history), "Unexpected role 'user' after role 'tool'")
        bridged = [*history[:3], {"role": "assistant", "content": "Done."}, USER]
        await accepted(mistral, body(bridged))


async def test_rule7_mistral_tool_call_ids_are_nine_alphanumerics(fake: FakeProvider) -> None:
    history = [USER, asst(call("call_12345")), tool("call_12345")]
    await accepted(fake, body(history))
    async with FakeProvider(mistral=True) as mistral:
        await rejected(
            mistral,
            body(history),
            "Tool call id was call_12345 but must be a-z, A-Z, 0-9, with a length of 9.",
        )


async def test_tool_names_must_match_the_pattern(fake: FakeProvider) -> None:
    tools: list[dict[str, Any]] = [
        {"type": "function", "function": {"name": "read file", "parameters": {}}}
    ]
    await rejected(
        fake,
        body([USER], tools=tools),
        "Invalid 'tools[0].function.name': string does not match pattern. Expected a string "
        "that matches the pattern '^[a-zA-Z0-9_-]+$'.",
    )
    tools[0]["function"]["name"] = "read_file-2"
    await accepted(fake, body([USER], tools=tools))


async def test_bodies_that_are_not_requests_are_rejected(fake: FakeProvider) -> None:
    assert (await post(fake, [1, 2]))[0] == 400
    assert (await post(fake, body([])))[0] == 400
    assert (await post(fake, {"messages": [USER], "stream": True}))[0] == 400
    assert (await post(fake, {**body([USER]), "stream": False}))[0] == 400
    assert (await post(fake, body([{"role": "robot", "content": "x"}])))[0] == 400
    assert fake.invalid_count == 5
