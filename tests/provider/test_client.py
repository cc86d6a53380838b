"""The streaming client against the strict fake provider, over real sockets."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from desktop.provider import errors
from desktop.provider.client import ChatClient, collect
from desktop.provider.errors import ProviderError
from desktop.provider.profiles import ToolSpec, make_profile
from desktop.provider.stream import Finish, ReasoningDelta, TextDelta, ToolCall, Usage
from desktop.provider.validate import PreflightError
from tests.support.fake_provider import (
    Call,
    FakeProvider,
    Reply,
    cut_reply,
    error_reply,
    stream_error_reply,
    text_reply,
    tool_call_reply,
)

USER = [{"role": "user", "content": "hi"}]
READ = ToolSpec(
    "read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}}
)


def client(fake: FakeProvider, provider: str = "openai-compatible", **kw: Any) -> ChatClient:
    model = kw.pop("model", "fake-model")
    timeout = kw.pop("read_timeout", 30.0)
    return ChatClient(
        make_profile(provider, base_url=fake.base_url, model=model, **kw), read_timeout=timeout
    )


async def failure(chat: ChatClient, messages: list[dict[str, Any]] = USER) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        await collect(chat.stream(messages))
    return caught.value


async def test_streams_reasoning_text_usage_and_finish(fake: FakeProvider) -> None:
    fake.script(text_reply("Hel", "lo", reasoning=["think"]))
    chat = client(fake)
    events = await collect(chat.stream(USER))
    await chat.close()
    assert events[:3] == [ReasoningDelta("think"), TextDelta("Hel"), TextDelta("lo")]
    assert isinstance(events[-2], Usage)
    assert events[-2].total_tokens == 18
    assert events[-1] == Finish("stop")
    assert fake.invalid_count == 0


async def test_tool_calls_split_in_chunks_arrive_whole_and_a_follow_up_is_valid(
    fake: FakeProvider,
) -> None:
    fake.script(tool_call_reply(Call("call_1", "read", {"path": "notes.txt"}), split=2))
    chat = client(fake)
    events = await collect(chat.stream(USER, tools=[READ]))
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert calls == [ToolCall(0, "call_1", "read", '{"path": "notes.txt"}')]
    follow_up: list[dict[str, Any]] = [
        *USER,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read", "arguments": calls[0].arguments},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "1: hello"},
    ]
    assert (await collect(chat.stream(follow_up, tools=[READ])))[-1] == Finish("stop")
    await chat.close()
    assert fake.requests[0].body["tools"][0]["function"]["name"] == "read"
    assert fake.invalid_count == 0


async def test_429_is_retryable_with_the_servers_delay(fake: FakeProvider) -> None:
    fake.script(error_reply(429, retry_after="3"), error_reply(429, retry_after_ms="1500"))
    chat = client(fake)
    first, second = await failure(chat), await failure(chat)
    await chat.close()
    assert (first.kind, first.retryable, first.retry_after) == (errors.RATE_LIMITED, True, 3.0)
    assert second.retry_after == 1.5


async def test_500_is_retryable_and_400_is_not(fake: FakeProvider) -> None:
    fake.script(
        error_reply(500, "boom", error_type="server_error"), error_reply(400, "no", error_type="x")
    )
    chat = client(fake)
    server, bad = await failure(chat), await failure(chat)
    await chat.close()
    assert server.retryable
    assert server.kind == errors.SERVER_ERROR
    assert not bad.retryable
    assert bad.kind == errors.BAD_REQUEST


async def test_connection_cut_before_output_is_retryable(fake: FakeProvider) -> None:
    fake.script(cut_reply())
    chat = client(fake)
    error = await failure(chat)
    await chat.close()
    assert error.retryable
    assert not error.output_started
    assert error.kind == errors.CONNECTION


async def test_connection_cut_after_output_is_not_retryable_and_says_output_started(
    fake: FakeProvider,
) -> None:
    fake.script(cut_reply("partial "))
    chat = client(fake)
    seen: list[object] = []

    async def consume() -> None:
        async for event in chat.stream(USER):
            seen.append(event)

    with pytest.raises(ProviderError) as caught:
        await consume()
    await chat.close()
    assert seen == [TextDelta("partial ")]
    assert caught.value.kind == errors.STREAM_CUT
    assert caught.value.output_started
    assert not caught.value.retryable


async def test_unreachable_server_is_a_retryable_connection_error() -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    chat = ChatClient(
        make_profile("openai-compatible", base_url=f"http://127.0.0.1:{port}/v1", model="m")
    )
    error = await failure(chat)
    await chat.close()
    assert error.kind == errors.CONNECTION
    assert error.retryable


async def test_error_object_mid_stream_raises_after_the_text_before_it(fake: FakeProvider) -> None:
    fake.script(stream_error_reply("par", message="Upstream overloaded", code=503))
    chat = client(fake)
    error = await failure(chat)
    await chat.close()
    assert error.kind == errors.STREAM_ERROR
    assert error.status == 503
    assert error.output_started
    assert "Upstream overloaded" in error.message


async def test_read_timeout_when_the_server_goes_silent(fake: FakeProvider) -> None:
    gate = asyncio.Event()
    reply = text_reply("never")
    reply.gate, reply.gate_after = gate, 1
    fake.script(reply)
    chat = client(fake, read_timeout=0.3)
    error = await failure(chat)
    gate.set()
    await chat.close()
    assert error.kind == errors.TIMEOUT
    assert error.retryable


async def test_missing_done_after_finish_completes_normally(fake: FakeProvider) -> None:
    fake.script(text_reply("ok", done=False))
    chat = client(fake)
    events = await collect(chat.stream(USER))
    await chat.close()
    assert events[0] == TextDelta("ok")
    assert events[-1] == Finish("stop")


async def test_a_violating_request_is_refused_before_anything_is_sent(fake: FakeProvider) -> None:
    chat = client(fake)
    broken: list[dict[str, Any]] = [
        *USER,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_x",
                    "type": "function",
                    "function": {"name": "read", "arguments": "{}"},
                }
            ],
        },
        {"role": "user", "content": "next"},
    ]
    with pytest.raises(PreflightError) as caught:
        await collect(chat.stream(broken))
    with pytest.raises(PreflightError):
        await collect(chat.stream_body({"model": "m", "messages": broken, "stream": True}))
    await chat.close()
    assert (caught.value.rule, caught.value.index) == ("1", 1)
    assert fake.requests == []


async def test_the_key_goes_in_the_header_and_never_into_errors_or_logs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    secret = "sk-test-0123456789abcdef"
    async with FakeProvider() as fake:  # its scripted 401 echoes the key, as some providers do
        fake.script(
            Reply(status=401, body=f'{{"error": {{"message": "bad key {secret}"}}}}'.encode())
        )
        chat = client(fake, api_key=secret)
        with caplog.at_level(logging.DEBUG):
            error = await failure(chat)
        await chat.close()
        assert fake.requests[0].headers["Authorization"] == f"Bearer {secret}"
    assert error.kind == errors.AUTH
    assert secret not in error.message
    assert secret not in repr(error)
    assert secret not in caplog.text
    assert secret not in repr(chat.profile)


def body_for(provider: str, model: str, **kw: Any) -> dict[str, Any]:
    profile = make_profile(provider, base_url="http://127.0.0.1:1/v1", model=model, **kw)
    return ChatClient(profile).build(USER, tools=[READ], max_tokens=512)


def test_groq_body_asks_for_parsed_reasoning_and_max_completion_tokens() -> None:
    body = body_for("groq", "qwen/qwen3-32b", parallel_tool_calls=False, service_tier="flex")
    assert body["reasoning_format"] == "parsed"
    assert "include_reasoning" not in body
    assert body["max_completion_tokens"] == 512
    assert "max_tokens" not in body
    assert body["parallel_tool_calls"] is False
    assert body["service_tier"] == "flex"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}


def test_groq_gpt_oss_takes_include_reasoning_not_reasoning_format() -> None:
    body = body_for("groq", "openai/gpt-oss-20b", include_reasoning=True)
    assert "reasoning_format" not in body
    assert body["include_reasoning"] is True
    assert "include_reasoning" not in body_for("groq", "openai/gpt-oss-120b")


def test_default_base_urls_and_max_tokens_field_per_profile() -> None:
    assert make_profile("groq", model="m").endpoint == (
        "https://api.groq.com/openai/v1/chat/completions"
    )
    assert (
        make_profile("openai", model="m").endpoint == "https://api.openai.com/v1/chat/completions"
    )
    assert body_for("openai-compatible", "llama")["max_tokens"] == 512
    assert "reasoning_format" not in body_for("openai", "gpt-5")
    with pytest.raises(ValueError, match="needs a base URL"):
        make_profile("openai-compatible", model="m")
    with pytest.raises(ValueError, match="unknown provider 'anthropic'"):
        make_profile("anthropic", model="m")


def test_mistral_family_is_detected_from_url_or_model_and_can_be_forced() -> None:
    assert make_profile(
        "openai-compatible", base_url="https://api.mistral.ai/v1", model="x"
    ).mistral
    assert make_profile("openai-compatible", base_url="http://h/v1", model="devstral-small").mistral
    assert not make_profile("openai-compatible", base_url="http://h/v1", model="qwen3").mistral
    assert make_profile(
        "openai-compatible", base_url="http://h/v1", model="q", mistral=True
    ).mistral


async def test_mistral_profile_preflight_refuses_a_long_tool_call_id() -> None:
    async with FakeProvider(mistral=True) as fake:
        chat = client(fake, mistral=True)
        history: list[dict[str, Any]] = [
            *USER,
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_long_id",
                        "type": "function",
                        "function": {"name": "read", "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_long_id", "content": "x"},
        ]
        with pytest.raises(PreflightError) as caught:
            await collect(chat.stream(history))
        await chat.close()
        assert caught.value.rule == "7"
        assert fake.requests == []
