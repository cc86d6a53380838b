"""Provider profiles: what differs between chat-completions endpoints, as data.

A profile decides the base URL default, the name of the max-tokens field, the Groq
reasoning parameters and whether the Mistral family's extra rules (docs/PROVIDER-RULES.md,
rule 7) apply. `build_body` is the only place a request body is assembled.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

PROVIDERS = ("openai", "groq", "openai-compatible")

DEFAULT_BASE_URLS = {
    "openai": "https://api.openai.com/v1",
    "groq": "https://api.groq.com/openai/v1",
}

_MISTRAL_MODEL = re.compile(r"(mistral|mixtral|codestral|devstral|magistral|ministral|pixtral)")


def is_mistral_family(base_url: str, model: str) -> bool:
    """Mistral's own API, or a Mistral-family model behind any compatible server (vLLM,
    Ollama): their chat templates enforce the same 9-character ids and role order."""
    return "mistral.ai" in base_url.lower() or bool(_MISTRAL_MODEL.search(model.lower()))


@dataclass(frozen=True)
class Profile:
    provider: str  # one of PROVIDERS
    base_url: str
    model: str
    api_key: str = field(default="", repr=False)
    mistral: bool = False
    parallel_tool_calls: bool | None = None
    service_tier: str | None = None
    include_reasoning: bool | None = None  # Groq's gpt-oss models only
    reasoning_effort: str | None = None
    context_window: int | None = None  # the user's window for this model, in tokens

    @property
    def endpoint(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    @property
    def max_tokens_field(self) -> str:
        # OpenAI and Groq deprecate `max_tokens`; local servers often know only it.
        return "max_tokens" if self.provider == "openai-compatible" else "max_completion_tokens"


def make_profile(
    provider: str,
    *,
    base_url: str = "",
    model: str,
    api_key: str = "",
    mistral: bool | None = None,
    parallel_tool_calls: bool | None = None,
    service_tier: str | None = None,
    include_reasoning: bool | None = None,
    reasoning_effort: str | None = None,
    context_window: int | None = None,
) -> Profile:
    """A profile with the provider's default base URL; `mistral=None` means detect."""
    if provider not in PROVIDERS:
        raise ValueError(f"unknown provider {provider!r}; expected one of {', '.join(PROVIDERS)}")
    url = base_url or DEFAULT_BASE_URLS.get(provider, "")
    if not url:
        raise ValueError("an openai-compatible provider needs a base URL")
    return Profile(
        provider=provider,
        base_url=url,
        model=model,
        api_key=api_key,
        mistral=is_mistral_family(url, model) if mistral is None else mistral,
        parallel_tool_calls=parallel_tool_calls,
        service_tier=service_tier,
        include_reasoning=include_reasoning,
        reasoning_effort=reasoning_effort,
        context_window=context_window,
    )


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model sees it: its name, description and JSON schema for arguments."""

    name: str
    description: str
    parameters: Mapping[str, Any]


def build_body(
    profile: Profile,
    messages: Sequence[Mapping[str, Any]],
    *,
    tools: Sequence[ToolSpec] = (),
    max_tokens: int | None = None,
    temperature: float | None = None,
) -> dict[str, Any]:
    """The JSON body of one streamed chat-completions request."""
    body: dict[str, Any] = {
        "model": profile.model,
        "messages": [dict(m) for m in messages],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": dict(t.parameters),
                },
            }
            for t in tools
        ]
        if profile.parallel_tool_calls is not None:
            body["parallel_tool_calls"] = profile.parallel_tool_calls
    if max_tokens is not None:
        body[profile.max_tokens_field] = max_tokens
    if temperature is not None:
        body["temperature"] = temperature
    if profile.reasoning_effort is not None:
        body["reasoning_effort"] = profile.reasoning_effort
    if profile.provider == "groq":
        if profile.model.startswith("openai/gpt-oss-"):
            # gpt-oss rejects `reasoning_format`; it takes an on/off switch instead.
            if profile.include_reasoning is not None:
                body["include_reasoning"] = profile.include_reasoning
        else:
            body["reasoning_format"] = "parsed"
        if profile.service_tier is not None:
            body["service_tier"] = profile.service_tier
    return body
