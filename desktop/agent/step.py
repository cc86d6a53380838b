"""One model call: lower the history, preflight, stream (deltas to the page, block ends and
periodic saves durable), and retry or report a failure."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from desktop.agent.call_ids import call_ids_for
from desktop.agent.lowering import LoweringOptions, lower_messages
from desktop.agent.retries import Retries
from desktop.agent.tools_exec import PendingCall
from desktop.events.bus import Draft, DurableBus, draft
from desktop.events.fanout import Fanout
from desktop.provider.client import ChatClient
from desktop.provider.errors import NOT_CONFIGURED, NOT_CONFIGURED_TEXT, ProviderError
from desktop.provider.profiles import Profile, ToolSpec
from desktop.provider.stream import (
    Finish,
    ReasoningDelta,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolCallStarted,
    Usage,
)
from desktop.provider.validate import PreflightError

log = logging.getLogger("desk.session.step")

# A streamed delta's block kind and the ephemeral event that carries it to the page.
_DELTAS: dict[type[TextDelta | ReasoningDelta], tuple[str, str]] = {
    TextDelta: ("text", "session.text.delta"),
    ReasoningDelta: ("reasoning", "session.reasoning.delta"),
}

AGENT = "build"
SAVE_EVERY = 0.5  # seconds between saves of the text of a block still streaming
PREFLIGHT = "internal.preflight"
REFUSED_AGAIN = "internal.refused_again"


def body_hash(body: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def model_of(profile: Profile) -> dict[str, str]:
    """The model a step's `session.step.started` names."""
    return {"id": profile.model, "provider_id": profile.provider}


@dataclass
class StepOutcome:
    session_id: str
    message_id: str
    client: ChatClient  # the last attempt's: the settings it was sent with
    calls: list[PendingCall] = field(default_factory=list)
    finish: str = ""
    text: str = ""
    failed: bool = False  # step.failed published: the turn ends
    cut: bool = False  # the stream broke after output: continue with a new step
    tokens: dict[str, int] = field(default_factory=dict)
    cost: float | None = None
    end: list[Draft] = field(default_factory=list)  # drafts the runner publishes at the end
    overflow: ProviderError | None = None  # refused as too long before output: compact
    context: dict[str, Any] | None = None  # the request's context use (step.ended)


class _Blocks:
    """The open text or reasoning block; a block ends when the kind changes or the stream
    ends, and only then is it written."""

    def __init__(self, session_id: str, message_id: str) -> None:
        self.session_id = session_id
        self.message_id = message_id
        self.kind = ""
        self.pieces: list[str] = []
        self.saved = 0  # pieces of the open block already saved
        self.text: list[str] = []

    def add(self, kind: str, piece: str) -> list[Draft]:
        out = self.close() if kind != self.kind else []
        self.kind = kind
        self.pieces.append(piece)
        return out

    def save(self) -> list[Draft]:
        """What arrived in the open block since the last save, as a durable event."""
        if len(self.pieces) == self.saved:
            return []
        piece = "".join(self.pieces[self.saved :])
        self.saved = len(self.pieces)
        data = {"message_id": self.message_id, "part": self.kind, "text": piece}
        return [draft(self.session_id, "session.step.streamed", data)]

    def close(self) -> list[Draft]:
        if not self.pieces:
            return []
        joined = "".join(self.pieces)
        self.pieces = []
        self.saved = 0
        if self.kind == "text":
            self.text.append(joined)
        kind = "session.text" if self.kind == "text" else "session.reasoning"
        return [draft(self.session_id, kind, {"message_id": self.message_id, "text": joined})]


class _PageDeltas:
    """Deltas on their way to the page, one ephemeral event per run of one kind per turn of
    the event loop. The deltas parsed from one network read arrive without the loop turning,
    so they leave as one event: a fast provider read in bursts costs the fan-out, the SSE
    writes and the page one frame per burst, not one per token, and a slow page falls behind
    by bursts. Flushed before every durable event, so the page never sees a delta after
    the durable text that replaces it."""

    def __init__(self, fanout: Fanout, session_id: str, message_id: str) -> None:
        self._fanout = fanout
        self._session_id = session_id
        self._message_id = message_id
        self._event = ""
        self._pieces: list[str] = []
        self._scheduled: asyncio.Handle | None = None

    def add(self, event: str, piece: str) -> None:
        if self._pieces and event != self._event:
            self.flush()
        self._event = event
        self._pieces.append(piece)
        if self._scheduled is None:
            self._scheduled = asyncio.get_running_loop().call_soon(self.flush)

    def flush(self) -> None:
        if self._scheduled is not None:
            self._scheduled.cancel()
            self._scheduled = None
        if not self._pieces:
            return
        delta = self._pieces[0] if len(self._pieces) == 1 else "".join(self._pieces)
        self._pieces = []
        self._fanout.publish(
            self._event,
            {
                "session_id": self._session_id,
                "data": {"message_id": self._message_id, "delta": delta},
            },
        )


class _Saver:
    """Saves the open block's new text SAVE_EVERY seconds after a piece arrives: a bounded
    number of writes per second however fast the provider streams. A save is enqueued on
    the bus in the same turn of the loop it is taken, so it lands before the block's end."""

    def __init__(self, bus: DurableBus, blocks: _Blocks, deltas: _PageDeltas) -> None:
        self._bus = bus
        self._blocks = blocks
        self._deltas = deltas
        self._task: asyncio.Task[None] | None = None

    def poke(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._save_later())

    async def _save_later(self) -> None:
        await asyncio.sleep(SAVE_EVERY)
        self._task = None
        drafts = self._blocks.save()
        if not drafts:
            return
        self._deltas.flush()  # the page has every delta the save holds before the save
        try:
            await self._bus.publish(drafts)
        except Exception:
            log.exception("saving streamed text of %s failed", self._blocks.session_id)

    def close(self) -> None:
        """No more saves: the block's own event (or the stream's end) follows."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()


def tokens_of(usage: Usage | None) -> dict[str, int]:
    if usage is None:
        return {}
    return {
        "input": usage.prompt_tokens,
        "output": usage.completion_tokens,
        "reasoning": usage.reasoning_tokens,
        "cache_read": usage.cached_tokens,
    }


@dataclass
class StepInput:
    session_id: str
    message_id: str
    history: Sequence[Mapping[str, Any]]
    system: str
    tools: Sequence[ToolSpec]
    model: dict[str, str]
    start: list[Draft]  # published with step.started (input deliveries)
    start_commit: Any = None  # their commit hook (inbox rows taken)
    release: Any = None  # commit hook of a step.failed: the failure ends the turn
    refused: set[str] | None = None  # hashes of bodies a provider refused this turn


async def run_step(
    bus: DurableBus, client: ChatClient, step: StepInput, retries: Retries
) -> StepOutcome:
    sid, mid = step.session_id, step.message_id
    out = StepOutcome(sid, mid, client)
    started = draft(
        sid, "session.step.started", {"message_id": mid, "agent": AGENT, "model": step.model}
    )
    await bus.publish([*step.start, started], commit=step.start_commit)
    body = await _body(bus, step, out)
    attempt = 0
    while body is not None:
        attempt += 1
        try:
            await _stream(bus, out.client, body, out)
            return out
        except ProviderError as exc:
            if exc.output_started:
                out.cut = True
                out.finish = "cut"
                return out
            if exc.overflow and step.refused is not None:
                step.refused.add(body_hash(body))
                out.overflow = exc
                return out
            delay = retries.delay(attempt, exc)
            if delay is None:
                await _failed(bus, step, out, {"type": exc.kind, "message": exc.message})
                return out
            then = await retries.wait(delay, attempt, exc, out.client, mid)
            body = await _resend(bus, step, out, body, then)
    return out


async def _body(bus: DurableBus, step: StepInput, out: StepOutcome) -> dict[str, Any] | None:
    """The request for `out.client`, preflighted and never one refused before; None (the
    step failed) otherwise."""
    options = LoweringOptions(mistral=out.client.profile.mistral, system=step.system)
    try:
        body = out.client.build(lower_messages(step.history, options), tools=step.tools)
    except PreflightError as exc:
        log.error("preflight refused a request of %s: %s", step.session_id, exc)
        message = f"Desk refused to send an invalid request: {exc}"
        await _failed(bus, step, out, {"type": PREFLIGHT, "message": message})
        return None
    if step.refused and body_hash(body) in step.refused:
        message = "Desk will not resend a refused request."
        await _failed(bus, step, out, {"type": REFUSED_AGAIN, "message": message})
        return None
    return body


async def _resend(
    bus: DurableBus,
    step: StepInput,
    out: StepOutcome,
    body: dict[str, Any],
    client: ChatClient | None,
) -> dict[str, Any] | None:
    """The body of the next attempt: the same one while the settings are, else one built
    for the new ones (a new model restarts the step's message with it); None: failed."""
    if client is None:
        await _failed(bus, step, out, {"type": NOT_CONFIGURED, "message": NOT_CONFIGURED_TEXT})
        return None
    if client.profile == out.client.profile:
        return body
    out.client = client
    model = model_of(client.profile)
    if model != step.model:
        step.model = model
        data = {"message_id": step.message_id, "agent": AGENT, "model": model}
        await bus.publish(draft(step.session_id, "session.step.started", data))
    return await _body(bus, step, out)


async def _failed(
    bus: DurableBus, step: StepInput, out: StepOutcome, error: dict[str, str]
) -> None:
    data = {"message_id": step.message_id, "error": error}
    await bus.publish(draft(step.session_id, "session.step.failed", data), commit=step.release)
    out.failed = True


async def _stream(
    bus: DurableBus, client: ChatClient, body: dict[str, Any], out: StepOutcome
) -> None:
    session_id, mid = out.session_id, out.message_id
    blocks = _Blocks(session_id, mid)
    fanout = bus.fanout
    deltas = _PageDeltas(fanout, session_id, mid)
    saver = _Saver(bus, blocks, deltas)
    streamed = False
    usage: Usage | None = None
    announced: dict[int, str] = {}
    calls: list[ToolCall] = []
    ids = await call_ids_for(bus.store, session_id)  # Desk's ids, never the provider's as-is
    try:
        async for event in client.stream_body(body):
            if not streamed:
                streamed = True
                await bus.publish(draft(session_id, "session.step.streamed", {"message_id": mid}))
            if isinstance(event, TextDelta | ReasoningDelta):
                kind, ephemeral = _DELTAS[type(event)]
                if blocks.kind != kind and blocks.pieces:
                    # A block of the other kind ends here: it becomes durable.
                    deltas.flush()
                    await bus.publish(blocks.add(kind, event.text))
                else:
                    blocks.add(kind, event.text)
                deltas.add(ephemeral, event.text)
                saver.poke()
            elif isinstance(event, ToolCallStarted):
                call_id = ids.assign(event.index, event.id)
                deltas.flush()
                drafts = blocks.close()
                drafts.append(
                    draft(
                        session_id,
                        "session.tool.input.started",
                        {"message_id": mid, "call_id": call_id, "name": event.name[:200]},
                    )
                )
                announced[event.index] = call_id
                await bus.publish(drafts)
            elif isinstance(event, ToolCallDelta):
                deltas.flush()
                fanout.publish(
                    "session.tool.input.delta",
                    {
                        "session_id": session_id,
                        "data": {
                            "message_id": mid,
                            "call_id": announced.get(event.index, str(event.index)),
                            "delta": event.arguments,
                        },
                    },
                )
            elif isinstance(event, ToolCall):
                calls.append(event)
            elif isinstance(event, Usage):
                usage = event
            elif isinstance(event, Finish):
                out.finish = event.reason
    finally:
        # Whatever arrived is kept, also when the stream broke or the turn was interrupted.
        saver.close()
        deltas.flush()
        rest = blocks.close()
        if rest:
            await asyncio.shield(bus.publish(rest))
        out.text = "".join(blocks.text)
    call_ids = ids.pending([(c.index, c.id) for c in calls])
    out.calls = [
        PendingCall(mid, call_id, c.name, c.arguments)
        for c, call_id in zip(calls, call_ids, strict=True)
    ]
    out.tokens = tokens_of(usage)
    out.cost = usage.cost if usage is not None else None
    if not out.finish:
        out.finish = "tool_calls" if calls else "stop"
