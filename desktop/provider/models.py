"""The provider's model list (`GET {base_url}/models`) and the context window each states.

Servers name the window differently: `context_length` (OpenRouter), `context_window`
(Groq), `max_model_len` (vLLM); Ollama and OpenAI state none. A provider without the
route, or one that answers something unreadable, is a `provider.models_unavailable` error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import aiohttp

from desktop.provider.errors import MODELS_UNAVAILABLE, ProviderError
from desktop.provider.profiles import Profile

WINDOW_FIELDS = ("context_length", "context_window", "max_model_len")
MAX_BODY = 16 * 1024 * 1024
TIMEOUT = aiohttp.ClientTimeout(total=20)


@dataclass(frozen=True)
class ModelInfo:
    id: str
    context_window: int | None

    def as_json(self) -> dict[str, object]:
        out: dict[str, object] = {"id": self.id}
        if self.context_window is not None:
            out["context_window"] = self.context_window
        return out


def window_of(entry: object) -> int | None:
    """The window one model entry states, in whichever field its server uses."""
    if not isinstance(entry, dict):
        return None
    for name in WINDOW_FIELDS:
        value = entry.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**40:
            return value
    return None


def parse_models(body: object) -> list[ModelInfo]:
    """`{data: [{id, ...}]}` (or a bare list) into model infos; entries without an id are
    skipped."""
    items = body.get("data") if isinstance(body, dict) else body
    if not isinstance(items, list):
        raise ValueError("the model list is not {data: [...]}")
    out: list[ModelInfo] = []
    for entry in items:
        model_id = entry.get("id") if isinstance(entry, dict) else None
        if isinstance(model_id, str) and model_id:
            out.append(ModelInfo(model_id[:256], window_of(entry)))
    return out


def _unavailable(detail: str) -> ProviderError:
    return ProviderError(
        MODELS_UNAVAILABLE, f"The provider's model list is unavailable: {detail}", retryable=False
    )


async def list_models(http: aiohttp.ClientSession, profile: Profile) -> list[ModelInfo]:
    """The provider's models; raises ProviderError(`provider.models_unavailable`)."""
    headers = {"Accept": "application/json"}
    if profile.api_key:
        headers["Authorization"] = f"Bearer {profile.api_key}"
    url = profile.base_url.rstrip("/") + "/models"
    try:
        async with http.get(
            url, headers=headers, timeout=TIMEOUT, allow_redirects=False
        ) as response:
            if response.status != 200:
                raise _unavailable(f"HTTP {response.status}")
            raw = await response.content.read(MAX_BODY)
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise _unavailable(exc.__class__.__name__) from exc
    try:
        return parse_models(json.loads(raw))
    except ValueError as exc:
        raise _unavailable(str(exc)) from exc


async def model_window(http: aiohttp.ClientSession, profile: Profile) -> int | None:
    """The window the model list states for the profile's model, or None."""
    for info in await list_models(http, profile):
        if info.id == profile.model:
            return info.context_window
    return None
