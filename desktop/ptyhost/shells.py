"""What counts as a shell: the one list of shell names, and what closing a terminal would end
that its person may care about (a shell idle at its prompt ends nothing)."""

from __future__ import annotations

import os

SHELLS = frozenset(
    {
        "bash",
        "sh",
        "zsh",
        "fish",
        "dash",
        "ksh",
        "mksh",
        "tcsh",
        "csh",
        "ash",
        "nu",
        "xonsh",
        "elvish",
    }
)


def is_shell(command: str) -> bool:
    name = os.path.basename(command).lstrip("-")
    return name in SHELLS or command == os.environ.get("SHELL")


def busy_with(command: str, foreground: str | None) -> str | None:
    """The program closing the terminal would end, or None when nothing runs that matters:
    the foreground program, unless it is the terminal's own shell (at its prompt). An unknown
    foreground ends nothing known."""
    if not foreground:
        return None
    program = os.path.basename(foreground)
    if program != os.path.basename(command) or not is_shell(command):
        return program
    return None
