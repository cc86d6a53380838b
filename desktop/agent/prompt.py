"""The system prompt: who the model is working for, where, with which tools, and the
project's instructions; built per step, so a new tool or an edited AGENTS.md needs no restart.
"""

from __future__ import annotations

import platform
from collections.abc import Iterable, Mapping
from typing import Any

_BASE = """You are Desk's coding agent, working for the user on their own machine.
Work in small verified steps: read before you edit, run the project's tests or a command to \
check what you changed, and say plainly what you did and what is still open.
Commands run through the `shell` tool in a terminal the user can see; they are not \
interactive (no pager, git never prompts). Prefer `read`, `glob` and `grep` over shell \
commands for looking at files, and `edit` for changing part of a file.
Never invent file contents or command output: use the tools."""


def system_prompt(
    directory: str, tools: Iterable[Mapping[str, Any]], instructions: str = ""
) -> str:
    """Byte-stable for the same inputs (providers' prompt caches depend on it)."""
    names = ", ".join(sorted(str(t["name"]) for t in tools)) or "none"
    system = f"{platform.system()} {platform.release()} ({platform.machine()})"
    prompt = f"{_BASE}\n\nWorking directory: {directory}\nPlatform: {system}\nTools: {names}"
    return f"{prompt}\n\n{instructions}" if instructions else prompt
