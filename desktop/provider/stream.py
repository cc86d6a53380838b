"""Chat-completion chunks (already framed by `sse`) turned into typed stream events by a pure
assembler."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field

from desktop.jsoncodec import loads
from desktop.provider.errors import (
    CONNECTION,
    INVALID_OUTPUT,
    STREAM_CUT,
    ProviderError,
    classify_stream_error,
)
from desktop.provider.sse import MAX_EVENT_BYTES, SSEDecoder, SSEError, SSEEvent


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    """The first delta of a tool call: lets a UI show the card before the arguments end."""

    index: int
    id: str
    name: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    index: int
    arguments: str


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A complete call. `arguments` is the raw text the model produced (maybe not JSON)."""

    index: int
    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    cost: float | None = None


@dataclass(frozen=True, slots=True)
class Finish:
    reason: str  # "stop", "tool_calls", "length", "content_filter", ... as the provider said


StreamEvent = (
    TextDelta | ReasoningDelta | ToolCallStarted | ToolCallDelta | ToolCall | Usage | Finish
)

# Where providers put streamed reasoning: Groq (`reasoning_format: parsed`) and OpenRouter
# use `reasoning`; DeepSeek, vLLM and llama.cpp use `reasoning_content`.
REASONING_FIELDS = ("reasoning", "reasoning_content")


@dataclass(slots=True)
class _PendingCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    announced: bool = False


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def parse_usage(raw: object) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    completion_details = raw.get("completion_tokens_details")
    prompt_details = raw.get("prompt_tokens_details")
    cost = raw.get("cost")
    return Usage(
        prompt_tokens=_int(raw.get("prompt_tokens")),
        completion_tokens=_int(raw.get("completion_tokens")),
        total_tokens=_int(raw.get("total_tokens")),
        reasoning_tokens=_int(
            completion_details.get("reasoning_tokens")
            if isinstance(completion_details, dict)
            else None
        ),
        cached_tokens=_int(
            prompt_details.get("cached_tokens") if isinstance(prompt_details, dict) else None
        ),
        cost=float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
    )


class ChunkAssembler:
    """Folds chunks into events; `finish()` yields the tool calls, usage and finish reason."""

    def __init__(self) -> None:
        self._calls: dict[int, _PendingCall] = {}
        self._usage: Usage | None = None
        self._finish: str | None = None
        self.output_started = False  # any text, reasoning or tool call was produced

    @property
    def finished(self) -> bool:
        """A finish reason arrived: the answer is whole even if `[DONE]` never comes."""
        return self._finish is not None

    def feed_data(self, data: str, out: list[StreamEvent]) -> None:
        """One SSE `data` payload (not `[DONE]`); its events are appended to `out`."""
        try:
            chunk = loads(data)
        except ValueError as exc:
            raise ProviderError(
                INVALID_OUTPUT,
                f"The provider sent a stream chunk that is not JSON: {data[:200]!r}",
                retryable=False,
                output_started=self.output_started,
            ) from exc
        if _SURROGATE_ESCAPE.search(data):
            chunk = without_lone_surrogates(chunk)
        self.feed(chunk, out)

    def feed(self, chunk: object, out: list[StreamEvent]) -> None:
        if type(chunk) is not dict:
            raise ProviderError(
                INVALID_OUTPUT,
                "The provider sent a stream chunk that is not a JSON object.",
                retryable=False,
                output_started=self.output_started,
            )
        # Most chunks are one small delta: look up the rare keys only when present.
        if "error" in chunk and chunk["error"] is not None:
            raise classify_stream_error(chunk["error"], output_started=self.output_started)
        if "usage" in chunk or "x_groq" in chunk:
            self._take_usage(chunk)
        choices = chunk.get("choices")
        if not choices or type(choices) is not list:
            return
        choice = choices[0]
        if type(choice) is not dict:
            return
        delta = choice.get("delta")
        if type(delta) is dict:
            self._delta(delta, out)
        reason = choice.get("finish_reason")
        if reason and type(reason) is str:
            self._finish = reason

    def _take_usage(self, chunk: dict[str, object]) -> None:
        usage = parse_usage(chunk.get("usage"))
        if usage is None:
            x_groq = chunk.get("x_groq")
            usage = parse_usage(x_groq.get("usage")) if isinstance(x_groq, dict) else None
        if usage is not None:
            self._usage = usage

    def _delta(self, delta: dict[str, object], events: list[StreamEvent]) -> None:
        content = delta.get("content")
        text_only = len(delta) == 1 and content is not None  # the common chunk
        if not text_only:
            for field_name in REASONING_FIELDS:
                text = delta.get(field_name)
                if text and type(text) is str:
                    self.output_started = True
                    events.append(ReasoningDelta(text))
        if content and type(content) is str:
            self.output_started = True
            events.append(TextDelta(content))
        if text_only:
            return
        calls = delta.get("tool_calls")
        if not isinstance(calls, list):
            return
        for position, raw in enumerate(calls):
            if not isinstance(raw, dict):
                continue
            index = raw.get("index")
            # Some servers send whole calls without `index`; their position stands in.
            key = index if isinstance(index, int) and not isinstance(index, bool) else position
            pending = self._calls.setdefault(key, _PendingCall())
            call_id = raw.get("id")
            if isinstance(call_id, str) and call_id and not pending.id:
                pending.id = call_id
            function = raw.get("function")
            if isinstance(function, dict):
                name = function.get("name")
                if isinstance(name, str) and name and not pending.name:
                    pending.name = name
                arguments = function.get("arguments")
                if isinstance(arguments, str) and arguments:
                    pending.arguments.append(arguments)
                    if pending.announced:
                        events.append(ToolCallDelta(key, arguments))
            if not pending.announced and pending.name:
                pending.announced = True
                self.output_started = True
                if not pending.id:
                    pending.id = f"call_{uuid.uuid4().hex[:24]}"
                events.append(ToolCallStarted(key, pending.id, pending.name))
                if pending.arguments:
                    events.append(ToolCallDelta(key, "".join(pending.arguments)))

    def finish(self) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        for index in sorted(self._calls):
            pending = self._calls[index]
            if not pending.name:
                continue  # argument fragments without a name cannot be called
            events.append(
                ToolCall(index, pending.id, pending.name, "".join(pending.arguments) or "{}")
            )
        if self._usage is not None:
            events.append(self._usage)
        reason = self._finish
        if reason is None:
            reason = "tool_calls" if any(isinstance(e, ToolCall) for e in events) else "stop"
        events.append(Finish(reason))
        return events


class StreamParser:
    """Bytes of a streamed response body in, events out: SSE framing plus the assembler.

    `feed` takes network chunks as they come (any split); after `done` turns true (at
    `[DONE]`) the rest of the body is ignored. `close()` at the end of the body yields the
    final events, or raises when the answer was cut (no `[DONE]`, no finish reason).
    """

    def __init__(self, max_event_bytes: int = MAX_EVENT_BYTES) -> None:
        self._decoder = SSEDecoder(max_event_bytes)
        self.assembler = ChunkAssembler()
        self.done = False

    @property
    def output_started(self) -> bool:
        return self.assembler.output_started

    def feed(self, chunk: bytes) -> list[StreamEvent]:
        if self.done:
            return []
        try:
            frames = self._decoder.feed(chunk)
        except SSEError as exc:
            raise self._framing_error(exc) from exc
        return self._frames(frames)

    def close(self) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        if not self.done:
            try:
                frames = self._decoder.close()
            except SSEError as exc:
                raise self._framing_error(exc) from exc
            events = self._frames(frames)
        if not self.done and not self.assembler.finished:
            started = self.output_started
            raise ProviderError(
                STREAM_CUT if started else CONNECTION,
                "The provider's stream ended before the answer was complete.",
                retryable=not started,
                output_started=started,
            )
        self.done = True
        events.extend(self.assembler.finish())
        return events

    def _frames(self, frames: list[SSEEvent]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        feed = self.assembler.feed_data
        for frame in frames:
            data = frame.data
            if len(data) < 16 and data.strip() == "[DONE]":
                self.done = True
                break
            if frame.event != "message" and frame.event == "error":
                raise classify_stream_error(
                    _error_payload(data), output_started=self.output_started
                )
            feed(data, events)
        return events

    def _framing_error(self, exc: SSEError) -> ProviderError:
        return ProviderError(
            STREAM_CUT if self.output_started else CONNECTION,
            f"The provider's stream broke the framing limits: {exc}",
            retryable=False,
            output_started=self.output_started,
        )


# The payload is text decoded from UTF-8 (bad bytes already U+FFFD): a lone surrogate can
# only come from a `\\udXXX` escape, so the rare chunk that has one is the only one walked.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def without_lone_surrogates(value: object) -> object:
    """`value` with every lone surrogate (no text, cannot be stored or sent) as U+FFFD;
    a well-formed pair stays the character it encodes."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [without_lone_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {
            without_lone_surrogates(key): without_lone_surrogates(item)
            for key, item in value.items()
        }
    return value


def _error_payload(data: str) -> object:
    try:
        value = json.loads(data)
    except ValueError:
        return data
    return value.get("error", value) if isinstance(value, dict) else value


def parse_stream(
    chunks: Iterable[bytes], max_event_bytes: int = MAX_EVENT_BYTES
) -> list[StreamEvent]:
    """Every event of a whole body given as chunks; raises like the live client would."""
    parser = StreamParser(max_event_bytes)
    events: list[StreamEvent] = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
        if parser.done:
            break
    events.extend(parser.close())
    return events
