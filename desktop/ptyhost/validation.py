"""Checks on what a client asks the PTY host to do: every bad field is a clear 400."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping

from desktop.config import user_environment
from desktop.ptyhost.terminal import TerminalSpec

MAX_DIMENSION = 1000
DEFAULT_COLS = 80
DEFAULT_ROWS = 24
MAX_TITLE = 1024
MAX_GROUP = 256
ATTACHMENT_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
# Secrets of the service never leak into terminals.
HIDDEN_ENV = ("DESK_API_KEY",)


class RequestError(Exception):
    """A request the host refuses; `status` is the HTTP status the service should answer."""

    def __init__(self, type: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.type = type
        self.message = message
        self.status = status

    def to_json(self) -> dict[str, object]:
        return {"type": self.type, "message": self.message, "status": self.status}


def invalid(message: str) -> RequestError:
    return RequestError("request.invalid", message, 400)


def optional_str(params: Mapping[str, object], name: str, limit: int) -> str | None:
    value = params.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise invalid(f"`{name}` must be a string.")
    if len(value) > limit:
        raise invalid(f"`{name}` is longer than {limit} characters.")
    if "\0" in value:
        raise invalid(f"`{name}` must not contain NUL characters.")
    return value


def dimension(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise invalid(f"`size.{name}` must be an integer from 1 to {MAX_DIMENSION}.")
    if not 1 <= value <= MAX_DIMENSION:
        raise invalid(f"`size.{name}` must be from 1 to {MAX_DIMENSION}, got {value}.")
    return value


def parse_size(value: object) -> tuple[int, int]:
    if not isinstance(value, dict):
        raise invalid("`size` must be an object {cols, rows}.")
    return dimension(value.get("cols"), "cols"), dimension(value.get("rows"), "rows")


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
        raise RequestError("pty.command_not_found", f"{command} is not an executable file.")
    found = shutil.which(command, path=path)
    if found is None:
        raise RequestError("pty.command_not_found", f"Command {command!r} was not found in PATH.")
    return command


def parse_create(params: Mapping[str, object]) -> TerminalSpec:
    """The spec of a new terminal; raises RequestError naming the first bad field."""
    raw_command = optional_str(params, "command", 4096)
    args = parse_args(params.get("args"))
    user_env = parse_env(params.get("env"))
    title = optional_str(params, "title", MAX_TITLE)
    group = optional_str(params, "group", MAX_GROUP)
    cols, rows = DEFAULT_COLS, DEFAULT_ROWS
    if params.get("size") is not None:
        cols, rows = parse_size(params.get("size"))
    cwd_value = optional_str(params, "cwd", 4096)
    env = base_environment()
    env.update(user_env)
    if cwd_value is None or cwd_value == "":
        cwd = os.path.expanduser("~")
    else:
        cwd = os.path.expanduser(cwd_value)
        if not os.path.isabs(cwd):
            raise RequestError("pty.invalid_cwd", f"cwd {cwd_value!r} must be an absolute path.")
    if not os.path.isdir(cwd):
        raise RequestError("pty.invalid_cwd", f"cwd {cwd!r} is not a directory.")
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


def parse_attachment_id(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not ATTACHMENT_ID.match(value):
        raise invalid("`attachment_id` must be 1-128 letters, digits, '_', '-', '.' or ':'.")
    return value
