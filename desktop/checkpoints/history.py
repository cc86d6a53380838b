"""What the session's messages say about its checkpoints: the agent's steps (the trees
before and after each step that changed files), turns, and the pending reverts, as pure
functions over the projected messages.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Message = Mapping[str, Any]


@dataclass(frozen=True)
class Step:
    message_id: str
    start: str
    end: str


def step_of(message: Message) -> Step | None:
    mark = message.get("checkpoint")
    if message.get("type") != "assistant" or not isinstance(mark, Mapping):
        return None
    return Step(str(message["id"]), str(mark["start"]), str(mark["end"]))


def index_of(messages: Sequence[Message], message_id: str) -> int | None:
    for i, m in enumerate(messages):
        if m.get("id") == message_id:
            return i
    return None


def live_steps(messages: Sequence[Message], start: int = 0) -> list[Step]:
    """The steps of messages from `start` on that no revert hid, in order."""
    found = (step_of(m) for m in messages[start:] if not m.get("reverted"))
    return [s for s in found if s is not None]


def turn_steps(messages: Sequence[Message], index: int) -> list[Step]:
    """The steps answering the message at `index`: up to the next user message (a user
    message's turn), or the message's own step (an assistant message)."""
    if messages[index].get("type") != "user":
        own = step_of(messages[index])
        return [] if own is None else [own]
    out: list[Step] = []
    for m in messages[index + 1 :]:
        if m.get("type") == "user":
            break
        step = step_of(m)
        if step is not None:
            out.append(step)
    return out


def kept_from(messages: Sequence[Message], turns: int) -> int:
    """The index of the first message whose checkpoints are kept: the session's last
    `turns` user messages and what follows them (0: all of them)."""
    users = [i for i, m in enumerate(messages) if m.get("type") == "user"]
    return users[-turns] if len(users) > turns else 0


def kept_trees(messages: Sequence[Message], turns: int) -> set[str]:
    """The trees of the steps from `kept_from` on (reverted ones too: their diffs stay)."""
    found = (step_of(m) for m in messages[kept_from(messages, turns) :])
    return {t for s in found if s is not None for t in (s.start, s.end)}


def expired(messages: Sequence[Message], index: int, turns: int) -> bool:
    """Whether a revert to the message at `index` needs a step retention has dropped."""
    kept = kept_from(messages, turns)
    return any(step_of(m) is not None and not m.get("reverted") for m in messages[index:kept])


def file_spans(steps: Sequence[Step], paths_of: Mapping[Step, Sequence[str]]) -> dict[str, Step]:
    """Per file, the span from the first step that changed it to the last one: a Step
    whose `start` is the first's start and `end` the last's end."""
    spans: dict[str, Step] = {}
    for step in steps:
        for path in paths_of[step]:
            first = spans.get(path)
            spans[path] = Step(step.message_id, first.start if first else step.start, step.end)
    return spans
