"""The context window: which window a session's model has, and how much of it a request uses
(counted offline, calibrated per model)."""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from desktop.agent.session_model import session_model
from desktop.events.projector import context_key
from desktop.provider.errors import ProviderError
from desktop.provider.profiles import Profile
from desktop.store import log as eventlog
from desktop.store import sessions as q
from desktop.store.db import Store

_log = logging.getLogger("desk.agent.context")

# Budget, as fractions of the window (docs/ARCHITECTURE.md "Context" gives the reasons).
RESERVE_FRACTION = 0.2  # kept free for the answer...
RESERVE_MAX = 16_384  # ...at most this many tokens
THRESHOLD = 0.85  # of the usable window (window - reserve): compact before passing it
TARGET = 0.5  # what a compaction aims at, of the usable window
CHARS_PER_TOKEN = 4.0  # the raw estimate before any calibration
MESSAGE_OVERHEAD = 4  # tokens a message costs beyond its text (role, framing)
MODELS_RETRY = 300.0  # seconds before asking a model list that failed again

LEARNED_KEY = "context.window/{provider}/{model}"  # {window, stated} from overflow errors


@dataclass(frozen=True)
class Budget:
    """The numbers one window gives."""

    window: int

    @property
    def reserve(self) -> int:
        return min(int(self.window * RESERVE_FRACTION), RESERVE_MAX)

    @property
    def usable(self) -> int:
        return self.window - self.reserve

    @property
    def threshold(self) -> int:
        return int(self.usable * THRESHOLD)

    @property
    def target(self) -> int:
        return int(self.usable * TARGET)


# Estimation ------------------------------------------------------------------------------
def text_size(value: object) -> int:
    """Characters of a value as the model will read it."""
    if isinstance(value, str):
        return len(value)
    if value is None:
        return 0
    return len(str(value))


def message_chars(message: Mapping[str, Any]) -> int:
    """Characters one projected message lowers to (text, tool inputs and results)."""
    kind = message.get("type")
    if kind in ("user", "synthetic"):
        return text_size(message.get("text"))
    if kind != "assistant":
        return 0
    total = 0
    for part in message.get("content") or ():
        ptype = part.get("type")
        if ptype == "text":
            total += text_size(part.get("text"))
        elif ptype == "tool":
            state = part.get("state") or {}
            total += 24 + text_size(part.get("name")) + text_size(state.get("input"))
            total += text_size(state.get("content"))
            error = state.get("error")
            if isinstance(error, Mapping):
                total += text_size(error.get("message"))
    return total


def raw_tokens(messages: Iterable[Mapping[str, Any]], fixed_chars: int = 0) -> float:
    """The uncalibrated estimate of a request: characters / 4 plus a per-message cost."""
    chars = fixed_chars
    count = 0
    for message in messages:
        chars += message_chars(message)
        count += 1
    return chars / CHARS_PER_TOKEN + MESSAGE_OVERHEAD * count


def raw_text_tokens(text: str) -> float:
    return len(text) / CHARS_PER_TOKEN


class Accounting:
    """Per model: how many reported tokens one raw-estimated token is; per session: the
    last request's reported count and raw estimate, so a new request costs that count
    plus the calibrated estimate of what was added since."""

    def __init__(self) -> None:
        self._factor: dict[str, float] = {}
        self._last: dict[str, tuple[float, int]] = {}

    def factor(self, model: str) -> float:
        return self._factor.get(model, 1.0)

    def used(self, session_id: str, model: str, raw: float) -> int:
        """The estimated prompt tokens of a request whose raw estimate is `raw`."""
        factor = self.factor(model)
        last = self._last.get(session_id)
        if last is not None and raw >= last[0]:
            return int(last[1] + (raw - last[0]) * factor)
        return int(raw * factor)

    def observe(self, session_id: str, model: str, raw: float, reported: int) -> None:
        """A request of raw estimate `raw` was counted `reported` by the provider."""
        if reported <= 0 or raw <= 0:
            return
        ratio = min(max(reported / raw, 0.25), 4.0)
        old = self._factor.get(model)
        self._factor[model] = ratio if old is None else old * 0.5 + ratio * 0.5
        self._last[session_id] = (raw, reported)

    def forget(self, session_id: str) -> None:
        """The history changed shape (compaction): estimate the next request whole."""
        self._last.pop(session_id, None)


# The window ------------------------------------------------------------------------------
ModelWindow = Callable[[Profile], Awaitable[int | None]]


def learned_key(profile: Profile) -> str:
    return LEARNED_KEY.format(provider=profile.base_url.rstrip("/"), model=profile.model)


class Windows:
    """Resolves a session's window; `model_window` asks the provider's model list (cached
    per base URL and model, a failure asked again after MODELS_RETRY)."""

    def __init__(self, store: Store, model_window: ModelWindow) -> None:
        self._store = store
        self._model_window = model_window
        self._listed: dict[tuple[str, str], tuple[int | None, float]] = {}

    async def _listed_window(self, profile: Profile) -> int | None:
        key = (profile.base_url, profile.model)
        cached = self._listed.get(key)
        if cached is not None and (cached[0] is not None or time.monotonic() < cached[1]):
            return cached[0]
        try:
            window = await self._model_window(profile)
        except (TimeoutError, ProviderError) as exc:
            _log.info("no model list from %s: %s", profile.base_url, exc)
            window = None
        self._listed[key] = (window, time.monotonic() + MODELS_RETRY)
        return window

    async def resolve(self, session_id: str, profile: Profile) -> int | None:
        def stored(conn: sqlite3.Connection) -> tuple[object, object]:
            own = q.kv_get(conn, context_key(session_id, "window"))
            return own, q.kv_get(conn, learned_key(profile))

        own, learned = await self._store.read(stored)
        if isinstance(own, int) and own > 0:
            return own
        if profile.context_window:
            return profile.context_window
        listed = await self._listed_window(profile)
        if listed:
            return listed
        if isinstance(learned, dict) and isinstance(learned.get("window"), int):
            return int(learned["window"])
        return None

    async def learn(self, profile: Profile, window: int, *, stated: bool) -> None:
        """Remember a window an overflow taught (a stated one is never replaced by a
        bound; a bound only ever shrinks)."""
        key = learned_key(profile)

        def write(conn: sqlite3.Connection) -> None:
            old = q.kv_get(conn, key)
            if isinstance(old, dict) and isinstance(old.get("window"), int):
                if old.get("stated") and not stated:
                    return
                if not stated and not old.get("stated") and old["window"] <= window:
                    return
            value = {"window": window, "stated": stated}
            q.kv_set(conn, key, value, eventlog.now_ms())

        await self._store.write(write)  # read-then-set in one transaction


def session_context(conn: sqlite3.Connection, session_id: str) -> dict[str, object]:
    """The session's `context: {used, window?}` and `model: {id, context_window?}` as the
    last step recorded them (API.md "Models and context")."""
    last = q.kv_get(conn, context_key(session_id, "last"))
    own = q.kv_get(conn, context_key(session_id, "window"))
    context: dict[str, object] = {"used": 0}
    model: dict[str, object] = {"id": ""}
    if isinstance(last, dict):
        context["used"] = int(last.get("used") or 0)
        if isinstance(last.get("window"), int):
            context["window"] = last["window"]
            model["context_window"] = last["window"]
        model["id"] = str(last.get("model") or "")
    if isinstance(own, int) and own > 0:
        context["window"] = own
        model["context_window"] = own
    chosen = session_model(conn, session_id)  # its own (or its parent's) model settings
    if chosen.model:
        model["id"] = chosen.model
    if chosen.reasoning_effort:
        model["reasoning_effort"] = chosen.reasoning_effort
    if chosen.context_window and not (isinstance(own, int) and own > 0):
        context["window"] = model["context_window"] = chosen.context_window
    return {"context": context, "model": model}
