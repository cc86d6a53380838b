"""What a create request becomes: a TerminalSpec, checked and resolved on the host's side.

Unlike validation.py (pure checks both sides share) this looks at the host's file system and
environment: the cwd must be a directory, the command must resolve in the terminal's PATH, and
the environment is the user's (minus the service's secrets) with the request's additions.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass

from desktop.config import user_environment
from desktop.ptyhost.protocol import PtyHostError
from desktop.ptyhost.validation import (
    DEFAULT_COLS,
    DEFAULT_ROWS,
    MAX_GROUP,
    MAX_PATH,
    MAX_TITLE,
    invalid,
    optional_str,
    parse_size,
)

# Secrets of the service never leak into terminals.
HIDDEN_ENV = ("DESK_API_KEY",)


@dataclass
class TerminalSpec:
    command: str
    args: list[str]
    cwd: str
    env: dict[str, str]
    cols: int
    rows: int
    title: str | None = None
    group: str | None = None


def parse_env(value: object) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise invalid("`env` must be an object of strings.")
    env: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(key, str) or not key or "=" in key or "\0" in key:
            raise invalid(f"`env` has an invalid variable name {key!r}.")
        if not isinstance(item, str) or "\0" in item:
            raise invalid(f"`env.{key}` must be a string without NUL characters.")
        env[key] = item
    return env


def parse_args(value: object) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise invalid("`args` must be a list of strings.")
    if any("\0" in item for item in value):
        raise invalid("`args` must not contain NUL characters.")
    return list(value)


def base_environment() -> dict[str, str]:
    env = {key: value for key, value in user_environment().items() if key not in HIDDEN_ENV}
    env["TERM"] = "xterm-256color"
    env["COLORTERM"] = "truecolor"
    return env


def default_shell() -> str:
    shell = os.environ.get("SHELL", "")
    if shell and os.path.isabs(shell) and os.access(shell, os.X_OK):
        return shell
    return "/bin/bash"


def resolve_command(command: str, path: str) -> str:
    if "/" in command:
        if os.path.isfile(command) and os.access(command, os.X_OK):
            return command
        raise PtyHostError("pty.command_not_found", f"{command} is not an executable file.")
    found = shutil.which(command, path=path)
    if found is None:
        raise PtyHostError("pty.command_not_found", f"Command {command!r} was not found in PATH.")
    return command


def parse_create(params: Mapping[str, object]) -> TerminalSpec:
    """The spec of a new terminal; raises PtyHostError naming the first bad field."""
    raw_command = optional_str(params, "command", MAX_PATH)
    args = parse_args(params.get("args"))
    user_env = parse_env(params.get("env"))
    title = optional_str(params, "title", MAX_TITLE)
    group = optional_str(params, "group", MAX_GROUP)
    cols, rows = DEFAULT_COLS, DEFAULT_ROWS
    if params.get("size") is not None:
        cols, rows = parse_size(params.get("size"))
    cwd_value = optional_str(params, "cwd", MAX_PATH)
    env = base_environment()
    env.update(user_env)
    if cwd_value is None or cwd_value == "":
        cwd = os.path.expanduser("~")
    else:
        cwd = os.path.expanduser(cwd_value)
        if not os.path.isabs(cwd):
            raise PtyHostError("pty.invalid_cwd", f"cwd {cwd_value!r} must be an absolute path.")
    if not os.path.isdir(cwd):
        raise PtyHostError("pty.invalid_cwd", f"cwd {cwd!r} is not a directory.")
    command = raw_command or default_shell()
    resolve_command(command, env.get("PATH", os.defpath))
    return TerminalSpec(
        command=command,
        args=args,
        cwd=cwd,
        env=env,
        cols=cols,
        rows=rows,
        title=title or None,
        group=group,
    )
