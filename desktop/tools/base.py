"""What every agent tool shares: its schema, input validation (`run_tool`, the one entry
point), results, path confinement."""

from __future__ import annotations

import contextlib
import errno
import json
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class ToolError(Exception):
    """A failure the model should read (bad path, text not found, ...)."""


@dataclass(frozen=True)
class ToolResult:
    output: str
    error: bool = False
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolContext:
    """Where a session's tools may act: its workspace, plus roots the user allowed; never
    inside `private` (Desk's own data and runtime dirs: the token, the provider key)."""

    root: Path
    allowed: tuple[Path, ...] = ()
    allow_anywhere: bool = False
    private: tuple[Path, ...] = ()
    # Paths (relative to the workspace) a deny rule keeps from this tool: glob and grep
    # leave them out, read refuses them whatever name led there.
    hidden: Callable[[str], bool] | None = field(default=None, compare=False)

    def is_hidden(self, real: Path) -> bool:
        return self.hidden is not None and self.hidden(self.display(real))

    def display(self, path: Path) -> str:
        """A path as the model should see it: relative to the workspace when inside."""
        root = Path(os.path.realpath(self.root))
        return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)

    def private_roots(self) -> tuple[Path, ...]:
        return tuple(Path(os.path.realpath(path)) for path in self.private)


def is_private(ctx: ToolContext, real: Path) -> bool:
    """Whether the real path `real` is one of Desk's private dirs or inside one."""
    return any(real == base or real.is_relative_to(base) for base in ctx.private_roots())


def private_within(ctx: ToolContext, real: Path) -> bool:
    """Whether a private dir lies inside the real folder `real` (a search must skip it)."""
    return any(base.is_relative_to(real) for base in ctx.private_roots())


def _base_of(ctx: ToolContext, real: Path) -> Path | None:
    """The allowed root (real path) that `real` lies in; None when it lies in none."""
    if ctx.allow_anywhere:
        return Path("/")
    for base in (ctx.root, *ctx.allowed):
        base_real = Path(os.path.realpath(base))
        if real == base_real or real.is_relative_to(base_real):
            return base_real
    return None


def confine(ctx: ToolContext, raw: str) -> Path:
    """The real path `raw` names (relative to the workspace), if the session may touch it.

    Symlinks and `..` are resolved first, so neither can lead outside, and Desk's private
    dirs are refused whatever the workspace. This only checks a name: open what it answers
    with `open_beneath` / `open_dir_beneath`, which refuse a path changed since. Blocking
    (it stats the file system): call from a worker thread.
    """
    if not raw or "\x00" in raw:
        raise ToolError("path must be a non-empty string without NUL characters")
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = ctx.root / path
    real = Path(os.path.realpath(path))
    if is_private(ctx, real):
        raise ToolError(f"{raw} is Desk's own private data; no tool may read or change it")
    if _base_of(ctx, real) is not None:
        return real
    raise ToolError(
        f"{raw} is outside the workspace {ctx.root}; the user has not allowed access there"
    )


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _changed(real: Path) -> ToolError:
    return ToolError(f"{real} changed while it was opened (a symbolic link appeared); retry")


def _walk(ctx: ToolContext, real: Path, *, create: bool) -> tuple[int, str | None]:
    """A directory fd of `real`'s parent (of `real` itself when it is its base) and the last
    component, reached from the allowed base one component at a time, never following a
    symlink (what RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS does in one openat2 call)."""
    base = _base_of(ctx, real)
    if base is None or is_private(ctx, real):
        raise ToolError(f"{real} is not a path the session may touch")
    parts = real.relative_to(base).parts
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise _changed(real) from exc
                raise
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd, (parts[-1] if parts else None)


def open_beneath(ctx: ToolContext, real: Path, flags: int, mode: int = 0o666) -> int:
    """Open the path `confine` answered without following any symlink on the way: what is
    opened is what was checked, even when another process swaps a component meanwhile."""
    parent, name = _walk(ctx, real, create=False)
    if name is None:
        return parent
    try:
        return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=parent)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _changed(real) from exc
        raise
    finally:
        os.close(parent)


def open_dir_beneath(ctx: ToolContext, real: Path, *, create: bool = False) -> int:
    """A directory fd of the confined folder `real` (its missing folders made when `create`),
    reached without following any symlink; write through it with dir_fd."""
    parent, name = _walk(ctx, real, create=create)
    if name is None:
        return parent
    try:
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o777, dir_fd=parent)
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _changed(real) from exc
        raise
    finally:
        os.close(parent)


# --- a small JSON-schema subset: what our tool schemas use, checked with clear messages ---

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


def schema_errors(schema: Mapping[str, Any], value: object, where: str = "arguments") -> list[str]:
    """Problems of `value` against `schema` (type, required, properties,
    additionalProperties: false, minimum, maximum, minLength, enum)."""
    kind = schema.get("type")
    if isinstance(kind, str):
        expected = _TYPES[kind]
        is_bool = isinstance(value, bool)
        if not isinstance(value, expected) or (is_bool and kind in ("integer", "number")):
            return [f"{where} must be {'an' if kind[0] in 'aeiou' else 'a'} {kind}"]
    errors: list[str] = []
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{where} must be one of {', '.join(map(json.dumps, schema['enum']))}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{where} must be at least {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{where} must be at most {schema['maximum']}")
    if isinstance(value, str) and len(value) < schema.get("minLength", 0):
        errors.append(f"{where} must not be empty")
    if isinstance(value, dict):
        properties: Mapping[str, Any] = schema.get("properties", {})
        for name in schema.get("required", ()):
            if name not in value:
                errors.append(f"{where}.{name} is required")
        for name, item in value.items():
            if name in properties:
                errors.extend(schema_errors(properties[name], item, f"{where}.{name}"))
            elif schema.get("additionalProperties") is False:
                errors.append(f"{where}.{name} is not a known argument")
    return errors


def arguments(required: list[str], **properties: Mapping[str, Any]) -> dict[str, Any]:
    """A tool's parameters: a JSON object of `properties` (each a schema), the `required`
    ones present and no other argument."""
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


class Tool(ABC):
    name: str
    description: str
    parameters: Mapping[str, Any]

    def spec(self) -> dict[str, Any]:
        """The function definition sent to the model."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}

    @abstractmethod
    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult: ...


def parse_arguments(tool: Tool, raw: str | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(raw, str):
        try:
            value = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError as exc:
            raise ToolError(
                f"the arguments are not valid JSON ({exc.msg}); send a JSON object"
            ) from exc
    else:
        value = dict(raw)
    problems = schema_errors(tool.parameters, value)
    if problems:
        raise ToolError("; ".join(problems))
    assert isinstance(value, dict)
    return value


async def run_tool(tool: Tool, raw: str | Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    """Validate, then run; every expected failure is an error result, never a crash."""
    try:
        args = parse_arguments(tool, raw)
    except ToolError as exc:
        return ToolResult(f"Invalid arguments for {tool.name}: {exc}", error=True)
    try:
        return await tool.run(args, ctx)
    except ToolError as exc:
        return ToolResult(f"{tool.name} failed: {exc}", error=True)
    except OSError as exc:
        reason = exc.strerror or exc.__class__.__name__
        target = f": {exc.filename}" if exc.filename else ""
        return ToolResult(f"{tool.name} failed: {reason}{target}", error=True)
