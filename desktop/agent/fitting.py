"""Fitting a step's request into the model's context window: the runner's one entry to context
handling (`prepare`, `recover`, `observe`)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from desktop.agent.compaction import (
    CompactionFailed,
    Compactor,
    Summarise,
    model_view,
    output_cap,
)
from desktop.agent.context import Accounting, Budget, Windows, raw_text_tokens, raw_tokens
from desktop.agent.retries import Retries
from desktop.events import history
from desktop.events.bus import DurableBus
from desktop.provider.client import ChatClient
from desktop.provider.errors import ProviderError
from desktop.provider.profiles import Profile, ToolSpec
from desktop.provider.stream import TextDelta

COMPACTION_FAILED = "context.compaction_failed"
ADVICE = (
    "Raise the context window in the settings if the model allows more, or start a new "
    "session from a summary of this one."
)


@dataclass
class Prepared:
    view: list[Mapping[str, Any]]  # the history the model sees
    window: int | None
    raw: float  # the request's uncalibrated estimate
    used: int  # its calibrated estimate


def _tools_chars(tools: Sequence[ToolSpec]) -> int:
    return sum(len(t.name) + len(t.description) + len(json.dumps(t.parameters)) for t in tools)


class Fitter:
    def __init__(
        self, bus: DurableBus, windows: Windows, accounting: Accounting, compactor: Compactor
    ) -> None:
        self.bus = bus
        self.windows = windows
        self.accounting = accounting
        self.compactor = compactor
        self._tools: dict[tuple[str, ...], int] = {}  # characters of each tool set

    def _fixed(self, system: str, tools: Sequence[ToolSpec]) -> float:
        key = tuple(f"{t.name}:{len(t.description)}" for t in tools)
        chars = self._tools.get(key)
        if chars is None:
            if len(self._tools) > 16:
                self._tools.clear()
            chars = self._tools[key] = _tools_chars(tools)
        return raw_text_tokens(system) + chars / 4

    async def _history(self, session_id: str) -> list[dict[str, Any]]:
        store = self.bus.store

        def read(conn: sqlite3.Connection) -> list[dict[str, Any]]:
            snap = history.read(conn, session_id)
            return [] if snap is None else snap.messages

        return await store.run(lambda: read(store.connection()))

    def _learner(self, profile: Profile) -> Any:
        async def learn(exc: ProviderError) -> Budget | None:
            if exc.window:
                await self.windows.learn(profile, exc.window, stated=True)
                return Budget(exc.window)
            return None

        return learn

    async def prepare(
        self,
        session_id: str,
        profile: Profile,
        summarise: Summarise,
        messages: Sequence[Mapping[str, Any]],
        pending: Sequence[Mapping[str, Any]],
        system: str,
        tools: Sequence[ToolSpec],
    ) -> Prepared:
        """The view of `messages` + `pending` (input delivered with this step), compacting
        `messages` first when the request would pass the threshold. Raises
        CompactionFailed."""
        window = await self.windows.resolve(session_id, profile)
        budget = Budget(window) if window else None
        factor = self.accounting.factor(profile.model)
        fixed = self._fixed(system, tools)
        view = model_view([*messages, *pending], cap=output_cap(budget, factor))
        raw = raw_tokens(view, 0) + fixed
        used = self.accounting.used(session_id, profile.model, raw)
        if budget is not None and used > budget.threshold:
            try:
                fixed_here = fixed + raw_tokens(pending) * factor
                await self._compact(
                    session_id,
                    messages,
                    budget,
                    factor,
                    fixed_here,
                    profile,
                    summarise,
                    "threshold",
                )
            except CompactionFailed as exc:
                if not exc.nothing or used > budget.usable:
                    raise
                # Nothing left to compact, and it still fits: send it as it is.
                return Prepared(view, window, raw, used)
            fresh = await self._history(session_id)
            view = model_view([*fresh, *pending], cap=output_cap(budget, factor))
            raw = raw_tokens(view, 0) + fixed
            used = self.accounting.used(session_id, profile.model, raw)
        return Prepared(view, window, raw, used)

    async def recover(
        self,
        session_id: str,
        profile: Profile,
        summarise: Summarise,
        exc: ProviderError,
        prepared: Prepared,
        step_message: str,
        system: str,
        tools: Sequence[ToolSpec],
    ) -> Prepared:
        """After an overflow refusal of the request `prepared` described: learn, compact
        smaller than the refused size, and give the new view. Raises CompactionFailed."""
        factor = self.accounting.factor(profile.model)
        refused = exc.requested or int(prepared.used)
        if exc.window:
            await self.windows.learn(profile, exc.window, stated=True)
            budget = Budget(exc.window)
        else:
            # Nothing stated: the refused size is an upper bound of the window.
            bound = max(int(refused), 256)
            await self.windows.learn(profile, bound, stated=False)
            budget = Budget(bound)
        if prepared.window and prepared.window < budget.window:
            budget = Budget(prepared.window)
        # The refused size over our estimate corrects the calibration for this attempt.
        if exc.requested and prepared.raw > 0:
            factor = max(factor, exc.requested / prepared.raw)
        messages = [m for m in await self._history(session_id) if m.get("id") != step_message]
        fixed = self._fixed(system, tools)
        await self._compact(
            session_id, messages, budget, factor, fixed, profile, summarise, "overflow"
        )
        fresh = await self._history(session_id)
        view = model_view(fresh, cap=output_cap(budget, factor))
        raw = raw_tokens(view, 0) + fixed
        return Prepared(view, budget.window, raw, int(raw * factor))

    async def manual(
        self,
        session_id: str,
        profile: Profile,
        summarise: Summarise,
        system: str,
        tools: Sequence[ToolSpec],
    ) -> None:
        """Compact now, whatever the size (the person asked). Raises CompactionFailed."""
        messages = await self._history(session_id)
        window = await self.windows.resolve(session_id, profile)
        factor = self.accounting.factor(profile.model)
        fixed = self._fixed(system, tools)
        raw = raw_tokens(model_view(messages), 0) + fixed
        used = int(raw * factor)
        budget = Budget(window) if window else Budget(max(int(used / 0.6), 2048))
        goal = min(budget.target, int(used * 0.5))
        await self._compact(
            session_id, messages, budget, factor, fixed, profile, summarise, "manual", goal
        )

    async def _compact(
        self,
        session_id: str,
        messages: Sequence[Mapping[str, Any]],
        budget: Budget,
        factor: float,
        fixed: float,
        profile: Profile,
        summarise: Summarise,
        reason: str,
        goal: int | None = None,
    ) -> None:
        """One compaction with this model's summariser; the token count starts over after."""
        await self.compactor.compact(
            session_id,
            messages,
            budget,
            factor=factor,
            fixed=fixed,
            summarise=summarise,
            learn=self._learner(profile),
            reason=reason,
            goal=goal,
        )
        self.accounting.forget(session_id)

    def observe(
        self, session_id: str, profile: Profile, prepared: Prepared, tokens: Mapping[str, int]
    ) -> dict[str, Any]:
        """Calibrate against the provider's count; the step's `context` record."""
        reported = int(tokens.get("input") or 0)
        if reported:
            self.accounting.observe(session_id, profile.model, prepared.raw, reported)
        context: dict[str, Any] = {"used": reported or prepared.used, "model": profile.model}
        if prepared.window:
            context["window"] = prepared.window
        return context


def summariser(client: ChatClient, retries: Retries) -> Summarise:
    """A compaction's summary requests, sent with `client`; a retryable failure is retried
    as a step's is (the back-off, `session.retry.scheduled`, the settings of the moment)."""

    async def summarise(messages: list[dict[str, Any]]) -> str:
        sender, attempt = client, 0
        while True:
            attempt += 1
            try:
                return await _summary(sender, messages)
            except ProviderError as exc:
                delay = retries.delay(attempt, exc)
                then = None if delay is None else await retries.wait(delay, attempt, exc, sender)
                if then is None:
                    raise  # not retryable, or no provider is configured any more
                sender = then

    return summarise


async def _summary(client: ChatClient, messages: list[dict[str, Any]]) -> str:
    pieces: list[str] = []
    async for event in client.stream(messages):
        if isinstance(event, TextDelta):
            pieces.append(event.text)
    return "".join(pieces)


def failure_text(exc: CompactionFailed) -> str:
    return (
        f"The conversation no longer fits the model's context window and could not be "
        f"compacted ({exc}). {ADVICE}"
    )
