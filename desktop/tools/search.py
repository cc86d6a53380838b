"""`glob` and `grep`: finding files and lines in the workspace, with ripgrep or a Python walk
that print the same."""

from __future__ import annotations

import asyncio
import fnmatch
import os
import re
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop.tools.base import (
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    arguments,
    confine,
    is_private,
    open_beneath,
    private_within,
)
from desktop.tools.ignore import glob_regex, walk

GLOB_LIMIT = 1000
GREP_LIMIT = 500  # matching lines shown
GREP_LINE_LIMIT = 500  # characters shown of one line
GREP_TIMEOUT = 30.0
IGNORED_NOTE = "ignored files (.gitignore) were skipped; set include_ignored to include them"
INCLUDE_IGNORED = {
    "type": "boolean",
    "description": "Also search files the project's .gitignore ignores (node_modules, builds)",
}


def _search_root(ctx: ToolContext, raw: str | None) -> Path:
    return confine(ctx, raw) if raw else confine(ctx, str(ctx.root))


class GlobTool(Tool):
    name = "glob"
    description = (
        "Find files of the workspace by glob pattern (`**/*.py`, `src/*.ts`), newest first. "
        "Files the project's .gitignore ignores are skipped unless include_ignored is true."
    )
    parameters = arguments(
        ["pattern"],
        pattern={"type": "string", "minLength": 1},
        path={"type": "string", "description": "Folder to search (default: workspace)"},
        include_ignored=INCLUDE_IGNORED,
    )

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await asyncio.to_thread(
            self._glob, ctx, args["pattern"], args.get("path"), args.get("include_ignored", False)
        )

    def _glob(
        self, ctx: ToolContext, pattern: str, raw: str | None, include_ignored: bool = False
    ) -> ToolResult:
        base = _search_root(ctx, raw)
        if not base.is_dir():
            raise ToolError(f"{raw} is not a folder")
        if Path(pattern).is_absolute() or ".." in Path(pattern).parts:
            raise ToolError("pattern must be relative to the folder and must not contain ..")
        found: list[tuple[float, str]] = []
        total = 0
        skipped = False
        matches = glob_regex(pattern)
        files = walk(
            base,
            respect_ignores=not include_ignored,
            skip_dir=lambda path: is_private(ctx, path),
        )
        for match, ignored in files:
            if ignored:
                skipped = True
                continue
            if not matches.match(match.relative_to(base).as_posix()):
                continue
            try:
                real = confine(ctx, str(match))  # a symlink may point outside
                info = real.stat()
            except (ToolError, OSError):
                continue
            if not stat.S_ISREG(info.st_mode) or ctx.is_hidden(real) or ctx.is_hidden(match):
                continue
            total += 1
            if len(found) < GLOB_LIMIT * 4:
                found.append((info.st_mtime, ctx.display(match)))
        found.sort(key=lambda item: (-item[0], item[1]))
        shown = [path for _, path in found[:GLOB_LIMIT]]
        note = f"\n({IGNORED_NOTE})" if skipped and (not shown or total > len(shown)) else ""
        if not shown:
            return ToolResult("No files found" + note, metadata={"count": 0})
        output = "\n".join(shown)
        if total > len(shown):
            output += f"\n({total - len(shown)} more not shown; narrow the pattern)"
        return ToolResult(output + note, metadata={"count": total, "truncated": total > len(shown)})


class GrepTool(Tool):
    name = "grep"
    description = (
        "Search file contents of the workspace with a regular expression. Prints "
        "path:line:text for each matching line. `glob` limits the files (`*.py`). Files the "
        "project's .gitignore ignores are skipped unless include_ignored is true."
    )
    parameters = arguments(
        ["pattern"],
        pattern={"type": "string", "minLength": 1, "description": "Regular expression"},
        path={"type": "string", "description": "File or folder (default: workspace)"},
        glob={"type": "string", "description": "Only files matching this glob"},
        include_ignored=INCLUDE_IGNORED,
    )

    def __init__(self, ripgrep: str | None = None, *, use_ripgrep: bool = True) -> None:
        self.ripgrep = (ripgrep or shutil.which("rg")) if use_ripgrep else None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        pattern: str = args["pattern"]
        glob: str | None = args.get("glob")
        every = bool(args.get("include_ignored", False))
        target, root = await asyncio.to_thread(_grep_target, ctx, args.get("path"))
        if self.ripgrep and not private_within(ctx, target):
            lines, total = await self._ripgrep(ctx, root, pattern, target, glob, every)
        else:
            lines, total = await asyncio.to_thread(_python_grep, ctx, pattern, target, glob, every)
        if not lines:
            return ToolResult("No matches found", metadata={"count": 0})
        output = "\n".join(lines)
        if total > len(lines):
            output += f"\n({total - len(lines)} more matching lines not shown; narrow the search)"
        return ToolResult(output, metadata={"count": total, "truncated": total > len(lines)})

    async def _ripgrep(
        self,
        ctx: ToolContext,
        root: Path,
        pattern: str,
        target: Path,
        glob: str | None,
        include_ignored: bool = False,
    ) -> tuple[list[str], int]:
        assert self.ripgrep is not None
        shown = str(target.relative_to(root)) if target.is_relative_to(root) else str(target)
        argv = [self.ripgrep, "--line-number", "--no-heading", "--with-filename", "--null"]
        argv += ["--color=never"]
        argv += ["--no-messages", "--max-columns", str(GREP_LINE_LIMIT), "--max-columns-preview"]
        argv += ["--hidden", "--glob", "!.git", "--glob", "!.hg", "--glob", "!.svn"]
        argv += ["--no-ignore"] if include_ignored else ["--no-require-git"]
        if glob:
            argv += ["--glob", glob]
        argv += ["-e", pattern, "--", shown or "."]
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=root,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            lines, total, err = await asyncio.wait_for(
                _collect(process, lambda shown: ctx.is_hidden(root / shown)), GREP_TIMEOUT
            )
        except TimeoutError as exc:
            raise ToolError(f"the search took longer than {GREP_TIMEOUT:.0f}s") from exc
        finally:
            # Cancelled (an interrupt) or timed out: the search must not outlive the call.
            if process.returncode is None:
                process.kill()
                await process.wait()
        if process.returncode == 2 and not lines:
            message = err.decode("utf-8", errors="replace").strip().splitlines()
            raise ToolError(message[-1] if message else "ripgrep failed")
        return lines, total


async def _collect(
    process: asyncio.subprocess.Process, hidden: Callable[[str], bool]
) -> tuple[list[str], int, bytes]:
    """The first GREP_LIMIT lines (`path NUL line:text`, printed `path:line:text`) of files
    not `hidden`; past them lines are only counted, so a search matching millions of lines
    costs no memory."""
    assert process.stdout is not None
    assert process.stderr is not None
    errors = asyncio.ensure_future(process.stderr.read())
    lines: list[str] = []
    total = 0
    try:
        while line := await process.stdout.readline():
            name, _, rest = line.decode("utf-8", errors="replace").rstrip("\n").partition("\0")
            name = name.removeprefix("./")
            if hidden(name):
                continue
            total += 1
            if len(lines) < GREP_LIMIT:
                lines.append(f"{name}:{rest}")
        await process.wait()
        return lines, total, await errors
    finally:
        errors.cancel()


def _grep_target(ctx: ToolContext, raw: str | None) -> tuple[Path, Path]:
    """The real file or folder to search, and the workspace's real root."""
    target = _search_root(ctx, raw)
    if not target.exists():
        raise ToolError(f"{raw} does not exist")
    return target, Path(os.path.realpath(ctx.root))


GREP_FILE_LIMIT = 16 * 1024 * 1024  # the Python fallback skips bigger files


def _python_grep(
    ctx: ToolContext, pattern: str, target: Path, glob: str | None, include_ignored: bool = False
) -> tuple[list[str], int]:
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise ToolError(f"invalid regular expression: {exc}") from exc
    lines: list[str] = []
    total = 0
    for path in _files(ctx, target, include_ignored):
        if ctx.is_hidden(path):
            continue
        if glob and not (fnmatch.fnmatch(path.name, glob) or fnmatch.fnmatch(str(path), glob)):
            continue
        try:
            real = confine(ctx, str(path))
            with os.fdopen(open_beneath(ctx, real, os.O_RDONLY | os.O_NONBLOCK), "rb") as handle:
                info = os.fstat(handle.fileno())
                if not stat.S_ISREG(info.st_mode) or info.st_size > GREP_FILE_LIMIT:
                    continue
                data = handle.read()
        except (ToolError, OSError):
            continue
        if b"\x00" in data[:8192]:
            continue
        shown = ctx.display(path)
        text = data.decode("utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            if regex.search(line):
                total += 1
                if len(lines) < GREP_LIMIT:
                    lines.append(f"{shown}:{number}:{line[:GREP_LINE_LIMIT]}")
    return lines, total


def _files(ctx: ToolContext, target: Path, include_ignored: bool) -> list[Path]:
    if target.is_file():
        return [target]
    # Desk's private dirs are never walked (confine refuses their files anyway).
    files = walk(
        target, respect_ignores=not include_ignored, skip_dir=lambda path: is_private(ctx, path)
    )
    return [path for path, ignored in files if not ignored]
