"""A session title from its first prompt, set after the first answer."""

from __future__ import annotations

import re

DEFAULT_TITLE = "New session"  # a new session's, until its first answer names it
MAX_TITLE_CHARS = 60

_SPACE = re.compile(r"\s+")


def title_from_prompt(text: str) -> str | None:
    """The first non-empty line, whitespace folded, cut at a word near 60 characters.

    A heuristic rather than a second model call: free, instant, never fails, never competes
    with the turn for the provider's rate limit. It only replaces the default title, so a name
    the user gave is never overwritten.
    """
    for line in text.splitlines():
        clean = _SPACE.sub(" ", line).strip().strip("#>*-` ").strip()
        if not clean:
            continue
        if len(clean) <= MAX_TITLE_CHARS:
            return clean
        cut = clean[:MAX_TITLE_CHARS].rsplit(" ", 1)[0] or clean[:MAX_TITLE_CHARS]
        return cut.rstrip(".,;:") + "…"
    return None
