"""What the context-compaction tests share: the fake's window, the summary it answers with, the
routes that answer (or first refuse) summary requests, and prose of a known token count."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from desktop.agent.compaction import SUMMARY_SYSTEM
from tests.support.fake_provider import Reply, count_text, text_reply

WINDOW = 8000
SUMMARY = "Goal: read the notes.\nDecisions: none.\nDone: read notes.\nFiles: notes.\nLeft: more."


def prose(tokens: int, seed: int) -> str:
    """Plain words in lines of twelve, which the fake counts as about `tokens` tokens."""
    rng = random.Random(seed)
    words: list[str] = []
    counted = 0
    while counted < tokens:
        word = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
        words.append(word)
        counted += count_text(word)
    return "\n".join(" ".join(words[i : i + 12]) for i in range(0, len(words), 12))


def is_summary(body: Any) -> bool:
    """Whether a request to the provider is a summary request."""
    first = body["messages"][0] if body.get("messages") else {}
    return first.get("role") == "system" and first.get("content") == SUMMARY_SYSTEM


def summaries(body: Any) -> Reply | None:
    """A fake provider route: SUMMARY for a summary request, the script otherwise."""
    return text_reply(SUMMARY) if is_summary(body) else None


def refused_summaries(times: int, refusal: Reply) -> Callable[[Any], Reply | None]:
    """A fake provider route: the first `times` summary requests get `refusal`, later ones
    SUMMARY; the script answers the rest."""
    seen = 0

    def route(body: Any) -> Reply | None:
        nonlocal seen
        if not is_summary(body):
            return None
        seen += 1
        return refusal if seen <= times else text_reply(SUMMARY)

    return route
