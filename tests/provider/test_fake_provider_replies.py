"""The fake's scripted replies and its request log behave as the tests rely on."""

from __future__ import annotations

import asyncio
import json

import aiohttp

from tests.support.fake_provider import (
    Call,
    FakeProvider,
    cut_reply,
    error_reply,
    text_reply,
    tool_call_reply,
)

BODY = {"model": "fake-model", "messages": [{"role": "user", "content": "hi"}], "stream": True}


async def test_requests_are_recorded_in_order_with_headers(fake: FakeProvider) -> None:
    async with aiohttp.ClientSession() as http:
        for n in range(2):
            payload = {**BODY, "messages": [{"role": "user", "content": f"m{n}"}]}
            async with http.post(
                fake.base_url + "/chat/completions",
                json=payload,
                headers={"Authorization": "Bearer k"},
            ) as response:
                await response.read()
    assert [r.body["messages"][0]["content"] for r in fake.requests] == ["m0", "m1"]
    assert fake.requests[0].headers["Authorization"] == "Bearer k"
    assert [r.status for r in fake.requests] == [200, 200]


async def test_unscripted_request_gets_the_default_text(fake: FakeProvider) -> None:
    async with (
        aiohttp.ClientSession() as http,
        http.post(fake.base_url + "/chat/completions", json=BODY) as response,
    ):
        text = await response.text()
    assert '"content":"Done."' in text
    assert text.endswith("data: [DONE]\n\n")


async def test_tool_call_reply_splits_arguments_and_ends_with_usage_then_done(
    fake: FakeProvider,
) -> None:
    fake.script(tool_call_reply(Call("call_1", "read", {"path": "a"}), split=4))
    async with (
        aiohttp.ClientSession() as http,
        http.post(fake.base_url + "/chat/completions", json=BODY) as response,
    ):
        frames = [f for f in (await response.text()).split("\n\n") if f]
    payloads = [json.loads(f.removeprefix("data: ")) for f in frames[:-1]]
    pieces = [
        c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
        for c in payloads
        if c["choices"] and "tool_calls" in c["choices"][0]["delta"]
    ]
    assert "".join(pieces) == '{"path": "a"}'
    assert len(pieces) > 2
    assert payloads[-1]["choices"] == []
    assert "usage" in payloads[-1]
    assert frames[-1] == "data: [DONE]"


async def test_error_reply_has_status_headers_and_openai_shape(fake: FakeProvider) -> None:
    fake.script(error_reply(429, "slow down", retry_after="2", retry_after_ms="2000"))
    async with (
        aiohttp.ClientSession() as http,
        http.post(fake.base_url + "/chat/completions", json=BODY) as response,
    ):
        assert response.status == 429
        assert response.headers["retry-after"] == "2"
        assert response.headers["retry-after-ms"] == "2000"
        assert (await response.json())["error"]["message"] == "slow down"
    assert fake.invalid_count == 0  # a scripted failure is not an invalid request


async def test_cut_reply_drops_the_connection_mid_body(fake: FakeProvider) -> None:
    fake.script(cut_reply("par"))
    async with (
        aiohttp.ClientSession() as http,
        http.post(fake.base_url + "/chat/completions", json=BODY) as response,
    ):
        try:
            await response.read()
        except aiohttp.ClientPayloadError:
            cut = True
        else:
            cut = False
    assert cut


async def test_gate_holds_the_stream_until_set(fake: FakeProvider) -> None:
    gate = asyncio.Event()
    reply = text_reply("a", "b")
    reply.gate, reply.gate_after = gate, 2
    fake.script(reply)
    async with (
        aiohttp.ClientSession() as http,
        http.post(fake.base_url + "/chat/completions", json=BODY) as response,
    ):
        first = await response.content.readuntil(b"\n\n")
        second = await response.content.readuntil(b"\n\n")
        assert b'"role":"assistant"' in first
        assert b'"content":"a"' in second
        pending = asyncio.ensure_future(response.content.readuntil(b"\n\n"))
        done, _ = await asyncio.wait({pending}, timeout=0.2)
        assert not done  # held at the gate
        gate.set()
        assert b'"content":"b"' in await pending


async def test_wrong_key_is_401_when_the_fake_requires_one() -> None:
    async with FakeProvider(api_key="right") as fake, aiohttp.ClientSession() as http:
        async with http.post(
            fake.base_url + "/chat/completions",
            json=BODY,
            headers={"Authorization": "Bearer wrong"},
        ) as response:
            assert response.status == 401
        async with http.post(
            fake.base_url + "/chat/completions",
            json=BODY,
            headers={"Authorization": "Bearer right"},
        ) as response:
            assert response.status == 200
