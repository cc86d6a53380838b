"""Context overflow: the strict fake speaks rule 8's six texts, Desk classifies each, and the
model list's window is read from each of its three field names."""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import pytest

from desktop.provider import errors
from desktop.provider.client import ChatClient
from desktop.provider.errors import ProviderError, classify_http_error
from desktop.provider.models import list_models, model_window
from desktop.provider.profiles import make_profile
from tests.support.fake_provider import (
    OVERFLOW_STYLES,
    FakeProvider,
    count_prompt,
    overflow_answer,
)

WINDOW = 200
BIG = "lorem ipsum dolor sit amet " * 100  # far over the window
# (style, the window the text states, the prompt size it states)
STATED = {
    "openai": (True, True),
    "groq": (False, False),
    "vllm": (True, True),
    "llamacpp": (True, True),
    "openrouter": (True, True),
    "anthropic": (True, True),
}
EXACT = {
    "openai": "This model's maximum context length is 200 tokens. However, your messages "
    "resulted in {n} tokens. Please reduce the length of the messages.",
    "groq": "Please reduce the length of the messages or completion.",
    "vllm": "This model's maximum context length is 200 tokens. However, you requested {n} "
    "tokens ({n} in the messages, 0 in the completion). Please reduce the length of the "
    "messages or completion.",
    "llamacpp": "the request exceeds the available context size, try increasing it",
    "openrouter": "This endpoint's maximum context length is 200 tokens. However, you "
    "requested about {n} tokens ({n} of text input). Please reduce the length of either one, "
    'or use the "middle-out" transform to compress your prompt automatically.',
    "anthropic": "prompt is too long: {n} tokens > 200 maximum",
}


def _message(body: dict[str, object]) -> str:
    inner = body.get("error", body)
    assert isinstance(inner, dict)
    return str(inner["message"])


@pytest.mark.parametrize("style", OVERFLOW_STYLES)
async def test_the_fake_answers_a_prompt_over_its_window_in_the_servers_own_words(
    style: str,
) -> None:
    async with (
        FakeProvider(window=WINDOW, overflow=style) as fake,
        aiohttp.ClientSession() as http,
    ):
        request = {"model": "m", "stream": True, "messages": [{"role": "user", "content": BIG}]}
        async with http.post(fake.base_url + "/chat/completions", json=request) as response:
            assert response.status == 400
            body = await response.json()
        n = count_prompt(request)
        assert n > WINDOW
        assert _message(body) == EXACT[style].format(n=n)
        assert fake.overflows == [0]
        assert fake.invalid_count == 0
        # A prompt that fits is answered as usual, its usage counted by the fake.
        small = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
        async with http.post(fake.base_url + "/chat/completions", json=small) as response:
            assert response.status == 200
            text = await response.text()
        assert f'"prompt_tokens":{count_prompt(small)}' in text


@pytest.mark.parametrize("style", OVERFLOW_STYLES)
def test_desk_classifies_each_overflow_text_and_reads_the_stated_window(style: str) -> None:
    error = classify_http_error(400, {}, overflow_answer(style, 32768, 40000).decode())
    assert error.kind == errors.CONTEXT_OVERFLOW
    assert error.overflow
    assert not error.retryable
    window_stated, size_stated = STATED[style]
    assert error.window == (32768 if window_stated else None)
    assert error.requested == (40000 if size_stated else None)


def test_other_400s_are_not_overflows() -> None:
    body = json.dumps({"error": {"message": "Invalid parameter: messages", "code": None}})
    assert classify_http_error(400, {}, body).kind == errors.BAD_REQUEST
    assert classify_http_error(429, {}, overflow_answer("groq", 1, 2).decode()).kind == (
        errors.RATE_LIMITED
    )


async def test_the_client_raises_the_overflow_before_any_output() -> None:
    async with FakeProvider(window=WINDOW, overflow="llamacpp") as fake:
        client = ChatClient(make_profile("openai-compatible", base_url=fake.base_url, model="m"))
        try:
            with pytest.raises(ProviderError) as caught:
                async for _ in client.stream([{"role": "user", "content": BIG}]):
                    pass
        finally:
            await client.close()
    assert caught.value.overflow
    assert caught.value.window == WINDOW
    assert not caught.value.output_started


@pytest.mark.parametrize("field", ["context_length", "context_window", "max_model_len"])
async def test_the_model_list_states_the_window_in_each_servers_field(field: str) -> None:
    models: list[dict[str, Any]] = [
        {"id": "other", field: 1},
        {"id": "m", field: 65536},
        {"id": "bare"},
    ]
    async with FakeProvider(models=models) as fake, aiohttp.ClientSession() as http:
        profile = make_profile("openai-compatible", base_url=fake.base_url, model="m")
        listed = await list_models(http, profile)
        assert [(m.id, m.context_window) for m in listed] == [
            ("other", 1),
            ("m", 65536),
            ("bare", None),
        ]
        assert await model_window(http, profile) == 65536


async def test_a_provider_without_a_model_list_is_models_unavailable() -> None:
    async with FakeProvider() as fake, aiohttp.ClientSession() as http:
        profile = make_profile("openai-compatible", base_url=fake.base_url, model="m")
        with pytest.raises(ProviderError) as caught:
            await list_models(http, profile)
    assert caught.value.kind == errors.MODELS_UNAVAILABLE
