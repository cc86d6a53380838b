"""Compaction: what the model sees of a long history (`model_view`) and how it is made smaller
(`Compactor`: prune, then summarise, as one durable event)."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from desktop.agent.context import (
    CHARS_PER_TOKEN,
    MESSAGE_OVERHEAD,
    Budget,
    message_chars,
)
from desktop.events.bus import DurableBus, draft
from desktop.events.ids import new_id
from desktop.provider.errors import ProviderError

_log = logging.getLogger("desk.agent.compaction")

PROTECT = 0.4  # of the usable window: the recent part whose tool outputs are never pruned
KEEP = 0.3  # of the usable window: the recent part a summary leaves unchanged
PRUNE_MIN = 400  # characters: a smaller output is not worth its placeholder
PIECE = 0.5  # of the usable window: the transcript one summary request carries
SUMMARY_CAP = 0.15  # of the usable window: the most a summary may take
TRANSCRIPT_TOOL = 2_000  # characters of one tool output the summariser reads
CUT_SHARE = 0.5  # of the usable window: the most one tool output may take

COMPACTION = "compaction"  # the description of a compaction's synthetic message
SUMMARY = "summary"  # the description of the summary the model sees in its place
SUMMARY_HEADER = (
    "Summary of the earlier conversation. Older messages were compacted to fit the context "
    "window; the person still sees them all. Continue from here.\n\n"
)
LATEST = "\n\nThe person's latest request, verbatim:\n{text}"
PRUNED = (
    "[Output pruned to save context: {chars} characters of {name} output dropped. "
    "Call {name} again with the same arguments ({args}) to see it.]"
)
CUT = (
    "\n\n[... {chars} characters cut here: this output is larger than the model's context "
    "window allows. Call {name} again with a narrower range (offset/limit, a pattern, head or "
    "tail) to see the rest.]\n\n"
)
SUMMARY_SYSTEM = (
    "You compact a coding assistant's conversation so the work can go on in a smaller "
    "context. You never call tools. You write only the summary."
)
SUMMARY_ASK = (
    "Summarise the conversation below for the assistant that will continue it. Use these "
    "headings: Goal; Decisions; Done; Files (paths touched, and how); Left (what remains, "
    "next step first). Keep names, paths, commands, numbers and errors exact; drop chatter. "
    "At most {words} words.\n\n"
)
PREVIOUS = "Summary so far (fold it in):\n{summary}\n\n"
PIECE_HEAD = "Conversation{part}:\n{text}"


def is_compaction(message: Mapping[str, Any]) -> bool:
    return message.get("type") == "synthetic" and message.get("description") == COMPACTION


def _meta(message: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = message.get("metadata")
    found = meta.get("compaction") if isinstance(meta, Mapping) else None
    return found if isinstance(found, Mapping) else {}


def _args(state: Mapping[str, Any]) -> str:
    raw = state.get("input")
    text = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
    return text if len(text) <= 160 else text[:157] + "..."


def placeholder(part: Mapping[str, Any]) -> str:
    state = part.get("state") or {}
    content = state.get("content")
    return PRUNED.format(
        chars=len(content) if isinstance(content, str) else 0,
        name=part.get("name") or "the tool",
        args=_args(state),
    )


def cut_output(text: str, limit: int, name: str) -> str:
    """`text` cut to about `limit` characters, head and tail kept, with the note between."""
    if len(text) <= limit:
        return text
    keep = max(limit - 400, 200)
    head, tail = keep * 2 // 3, keep // 3
    dropped = len(text) - head - tail
    return text[:head] + CUT.format(chars=dropped, name=name) + text[len(text) - tail :]


def _edited(message: Mapping[str, Any], pruned: set[str], cap: int | None) -> Mapping[str, Any]:
    """The message with pruned outputs replaced and oversized ones cut (a copy if changed)."""
    if message.get("type") != "assistant":
        return message
    parts = message.get("content") or []
    out: list[Any] = []
    changed = False
    for part in parts:
        if part.get("type") == "tool" and (part.get("state") or {}).get("status") == "completed":
            state = part["state"]
            content = state.get("content")
            if isinstance(content, str):
                new = None
                if part.get("id") in pruned:
                    new = placeholder(part)
                elif cap is not None and len(content) > cap:
                    new = cut_output(content, cap, str(part.get("name") or "the tool"))
                if new is not None:
                    part = {**part, "state": {**state, "content": new}}
                    changed = True
        out.append(part)
    return {**message, "content": out} if changed else message


def model_view(
    messages: Sequence[Mapping[str, Any]], *, cap: int | None = None
) -> list[Mapping[str, Any]]:
    """The history as the model is to see it (see the module docstring). `cap`: the most
    characters one tool output may keep."""
    pruned: set[str] = set()
    last = -1
    for index, message in enumerate(messages):
        if is_compaction(message):
            pruned.update(_meta(message).get("pruned") or ())
            if message.get("text"):
                last = index
    start = 0
    head: list[Mapping[str, Any]] = []
    if last >= 0:
        summary = messages[last]
        through = _meta(summary).get("through")
        for index in range(last):
            if messages[index].get("id") == through:
                start = index + 1
                break
        text = SUMMARY_HEADER + str(summary.get("text"))
        summarised_users = [m for m in messages[:start] if m.get("type") == "user"]
        later_users = [m for m in messages[start:] if m.get("type") == "user"]
        if summarised_users and not later_users:
            text += LATEST.format(text=summarised_users[-1].get("text", ""))
        head = [
            {"id": summary.get("id"), "type": "synthetic", "text": text, "description": SUMMARY}
        ]
    tail = [_edited(m, pruned, cap) for m in messages[start:] if not is_compaction(m)]
    return [*head, *tail]


def output_cap(budget: Budget | None, factor: float) -> int | None:
    """Characters one tool output may keep in a request for this window."""
    if budget is None:
        return None
    return max(int(budget.usable * CUT_SHARE * CHARS_PER_TOKEN / factor), 2_000)


def tokens_of(message: Mapping[str, Any], factor: float) -> float:
    return (message_chars(message) / CHARS_PER_TOKEN + MESSAGE_OVERHEAD) * factor


# Planning ------------------------------------------------------------------------------
@dataclass
class Plan:
    pruned: list[str] = field(default_factory=list)
    older: list[Mapping[str, Any]] = field(default_factory=list)  # to summarise
    through: str | None = None
    before: int = 0
    after_prune: int = 0


def plan(
    history: Sequence[Mapping[str, Any]], budget: Budget, factor: float, fixed: float, goal: int
) -> Plan:
    """What to prune and what to summarise so the request (messages + `fixed` tokens of
    system prompt and tools) comes down to `goal` tokens."""
    cap = output_cap(budget, factor)
    view = model_view(history, cap=cap)
    sizes = [tokens_of(m, factor) for m in view]
    total = fixed + sum(sizes)
    result = Plan(before=int(total))
    # Prune: every large output before the protected recent part.
    protect = budget.usable * PROTECT
    seen = 0.0
    boundary = len(view)
    while boundary > 0 and seen + sizes[boundary - 1] <= protect:
        boundary -= 1
        seen += sizes[boundary]
    saved = 0.0
    for message in view[:boundary]:
        if message.get("type") != "assistant":
            continue
        for part in message.get("content") or []:
            state = part.get("state") or {}
            content = state.get("content")
            if (
                part.get("type") == "tool"
                and state.get("status") == "completed"
                and isinstance(content, str)
                and len(content) >= PRUNE_MIN
                and not content.startswith("[Output pruned")
            ):
                result.pruned.append(str(part.get("id")))
                saved += (len(content) - len(placeholder(part))) / CHARS_PER_TOKEN * factor
    result.after_prune = int(total - saved)
    if result.after_prune <= goal:
        return result
    # Summarise everything before the kept recent part.
    pruned = set(result.pruned)
    whole = view  # the summariser reads the outputs pruning drops (shortened)
    view = [_edited(m, pruned, cap) for m in view]
    sizes = [tokens_of(m, factor) for m in view]
    keep = min(budget.usable * KEEP, goal * 0.6)
    kept = 0.0
    first = len(view)
    while first > 1 and kept + sizes[first - 1] <= keep:
        first -= 1
        kept += sizes[first]
    if first == len(view):
        first = len(view) - 1  # the newest message is always sent
    older = list(whole[:first])
    real = [m for m in older if m.get("description") != SUMMARY]
    if not real:
        return result
    result.older = older
    result.through = str(real[-1].get("id"))
    return result


# The summary request ---------------------------------------------------------------------
def render(message: Mapping[str, Any]) -> str:
    """One message as the summariser reads it."""
    kind = message.get("type")
    if kind == "user":
        return f"USER: {message.get('text', '')}"
    if kind == "synthetic":
        return f"NOTE: {message.get('text', '')}"
    lines: list[str] = []
    for part in message.get("content") or []:
        ptype = part.get("type")
        if ptype == "text" and part.get("text"):
            lines.append(f"ASSISTANT: {part['text']}")
        elif ptype == "tool":
            state = part.get("state") or {}
            output = state.get("content")
            if output is None:
                error = state.get("error")
                output = error.get("message") if isinstance(error, Mapping) else "(no result)"
            output = str(output)
            if len(output) > TRANSCRIPT_TOOL:
                output = (
                    output[: TRANSCRIPT_TOOL // 2] + " [...] " + output[-TRANSCRIPT_TOOL // 2 :]
                )
            lines.append(f"TOOL {part.get('name')}({_args(state)}) -> {output}")
    return "\n".join(lines)


def pieces(older: Sequence[Mapping[str, Any]], limit_chars: int) -> list[str]:
    """The transcript of `older` in pieces of at most `limit_chars` (a longer message is
    cut to fit)."""
    out: list[str] = []
    current: list[str] = []
    size = 0
    for message in older:
        text = render(message)
        if not text:
            continue
        if len(text) > limit_chars:
            text = cut_output(text, limit_chars, "it")
        if current and size + len(text) + 2 > limit_chars:
            out.append("\n\n".join(current))
            current, size = [], 0
        current.append(text)
        size += len(text) + 2
    if current:
        out.append("\n\n".join(current))
    return out


def summary_request(previous: str, piece: str, part: str, words: int) -> list[dict[str, Any]]:
    ask = SUMMARY_ASK.format(words=words)
    if previous:
        ask += PREVIOUS.format(summary=previous)
    ask += PIECE_HEAD.format(part=part, text=piece)
    return [{"role": "system", "content": SUMMARY_SYSTEM}, {"role": "user", "content": ask}]


Summarise = Callable[[list[dict[str, Any]]], Awaitable[str]]
Learn = Callable[[ProviderError], Awaitable[Budget | None]]


class CompactionFailed(Exception):
    """The history cannot be made to fit; its text says why, for the turn's error.
    `nothing`: there was nothing to prune or summarise (no request was made)."""

    def __init__(self, reason: str, *, nothing: bool = False) -> None:
        super().__init__(reason)
        self.nothing = nothing


@dataclass
class Compacted:
    event_id: str
    before: int
    after: int


class Compactor:
    """Runs a plan: the summary requests through `summarise`, then one durable event."""

    def __init__(self, bus: DurableBus) -> None:
        self.bus = bus

    async def compact(
        self,
        session_id: str,
        history: Sequence[Mapping[str, Any]],
        budget: Budget,
        *,
        factor: float,
        fixed: float,
        summarise: Summarise,
        learn: Learn,
        reason: str,
        goal: int | None = None,
    ) -> Compacted:
        """Make `history` fit `goal` (default: the budget's target); raises
        CompactionFailed when it cannot."""
        aim = budget.target if goal is None else goal
        found = plan(history, budget, factor, fixed, aim)
        summary = ""
        after = found.after_prune
        if found.older:
            summary = await self._summarise(found.older, budget, factor, summarise, learn)
            view = model_view(
                [
                    *history,
                    {
                        "type": "synthetic",
                        "description": COMPACTION,
                        "text": summary,
                        "metadata": {
                            COMPACTION: {"through": found.through, "pruned": found.pruned}
                        },
                    },
                ],
                cap=output_cap(budget, factor),
            )
            after = int(fixed + sum(tokens_of(m, factor) for m in view))
        elif after > budget.usable:
            raise CompactionFailed(
                "the newest messages alone do not fit the context window, and there is "
                "nothing older to summarise"
            )
        if not found.pruned and not found.older:
            raise CompactionFailed("there is nothing older to compact", nothing=True)
        if after >= found.before:
            raise CompactionFailed("compaction did not make the history smaller")
        event_id = new_id("msg")
        data = {
            "message_id": event_id,
            "summary": summary,
            "through": found.through,
            "pruned": found.pruned,
            "reason": reason,
            "tokens": {"before": max(found.before, 0), "after": max(after, 0)},
        }
        await self.bus.publish(draft(session_id, "session.compacted", data))
        _log.info("compacted %s: %d -> %d tokens (%s)", session_id, found.before, after, reason)
        return Compacted(event_id, found.before, after)

    async def _summarise(
        self,
        older: Sequence[Mapping[str, Any]],
        budget: Budget,
        factor: float,
        summarise: Summarise,
        learn: Learn,
    ) -> str:
        share = PIECE
        refused = 0  # characters of the piece a provider refused: a retry sends less
        for attempt in (1, 2):
            piece_tokens = max(int(budget.usable * share) - 600, 200)
            words = max(int(budget.usable * SUMMARY_CAP * 0.7), 100)
            limit = int(piece_tokens * CHARS_PER_TOKEN / factor)
            if refused:
                limit = min(limit, max(refused // 2, 200))
            try:
                summary = ""
                parts = pieces(older, limit)
                for index, piece in enumerate(parts):
                    refused = len(piece)
                    label = f" (part {index + 1} of {len(parts)})" if len(parts) > 1 else ""
                    summary = (
                        await summarise(summary_request(summary, piece, label, words))
                    ).strip()
                    if not summary:
                        raise CompactionFailed("the model returned an empty summary")
                return summary
            except ProviderError as exc:
                if not exc.overflow or attempt == 2:
                    raise CompactionFailed(f"the summary request failed: {exc.message}") from exc
                learned = await learn(exc)
                if learned is not None:
                    budget = learned
                share /= 2
        raise CompactionFailed("the summary request did not fit")  # pragma: no cover
