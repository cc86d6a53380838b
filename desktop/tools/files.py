"""`read`, `write` and `edit`: file tools confined to the workspace, I/O in a worker thread."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import stat
from pathlib import Path
from typing import Any, BinaryIO

from desktop.tools.base import (
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    arguments,
    confine,
    open_beneath,
    open_dir_beneath,
)

READ_DEFAULT_LIMIT = 2000
READ_MAX_LIMIT = 20000
LINE_LIMIT = 2000  # characters shown of one line
READ_OUTPUT_LIMIT = 100_000
WRITE_LIMIT = 10 * 1024 * 1024
EDIT_FILE_LIMIT = 10 * 1024 * 1024
_SNIFF = 8192


def _atomic_write(ctx: ToolContext, path: Path, data: bytes) -> None:
    """Replace the confined `path` in one step (a crash never leaves half a file), keeping
    its mode; a new file gets the usual 0666 minus the umask, as any editor would create it.
    Everything happens through a directory fd reached without following symlinks, so a link
    swapped in meanwhile never redirects the write outside the workspace."""
    folder = open_dir_beneath(ctx, path.parent, create=True)
    try:
        try:
            info = os.stat(path.name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            info = None
        if info is not None and stat.S_ISDIR(info.st_mode):
            raise ToolError(f"{ctx.display(path)} is a directory")
        tmp = f".{path.name}.{secrets.token_hex(6)}.desk-tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(tmp, flags, 0o666, dir_fd=folder)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                if info is not None and stat.S_ISREG(info.st_mode):
                    os.fchmod(handle.fileno(), stat.S_IMODE(info.st_mode))
                os.fsync(handle.fileno())
            os.replace(tmp, path.name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=folder)
            raise
    finally:
        os.close(folder)


def _open_regular(ctx: ToolContext, raw: str, path: Path) -> BinaryIO:
    """The confined regular file `path`, opened (checked on the opened file, not the name)."""
    try:
        fd = open_beneath(ctx, path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not block
    except FileNotFoundError as exc:
        raise ToolError(f"{raw} does not exist") from exc
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        if stat.S_ISDIR(info.st_mode):
            raise ToolError(f"{raw} is a directory; use glob to list files")
        raise ToolError(f"{raw} is not a regular file")  # a FIFO or a device would never end
    return os.fdopen(fd, "rb")


def _list_folder(ctx: ToolContext, raw: str, path: Path, offset: int, limit: int) -> ToolResult:
    """A folder's entries, sorted, folders with a trailing `/` (what `read` of a folder
    answers); entries a deny rule keeps from the agent are left out."""
    fd = open_dir_beneath(ctx, path)
    try:
        names = sorted(os.listdir(fd))
        entries = []
        for name in names:
            if ctx.is_hidden(path / name):
                continue
            try:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError:
                continue
            entries.append(name + "/" if stat.S_ISDIR(info.st_mode) else name)
    finally:
        os.close(fd)
    shown = entries[offset - 1 : offset - 1 + limit]
    counted = {"path": ctx.display(path), "entries": len(entries)}
    if not shown:
        text = "(empty folder)" if not entries else f"{raw} has fewer than {offset} entries"
        return ToolResult(text, metadata=counted)
    left = len(entries) - (offset - 1 + len(shown))
    return _page(shown, offset, f"{left} more entries" if left > 0 else "", counted)


def _page(shown: list[str], offset: int, more: str, metadata: dict[str, Any]) -> ToolResult:
    """`shown`, the lines from `offset` on, and how to go on when `more` says there is more."""
    output = "\n".join(shown)
    if more:
        output += f"\n({more}; continue with offset={offset + len(shown)})"
    return ToolResult(output, metadata=metadata)


class ReadTool(Tool):
    name = "read"
    description = (
        "Read a text file of the workspace. Returns numbered lines (line number, a tab, the "
        "line). Use offset (1-based line) and limit to page through long files. A folder "
        "answers its entries (folders end with /)."
    )
    parameters = arguments(
        ["path"],
        path={"type": "string", "minLength": 1, "description": "File path"},
        offset={"type": "integer", "minimum": 1, "description": "First line (1-based)"},
        limit={"type": "integer", "minimum": 1, "maximum": READ_MAX_LIMIT},
    )

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await asyncio.to_thread(
            self._read,
            ctx,
            args["path"],
            args.get("offset", 1),
            args.get("limit", READ_DEFAULT_LIMIT),
        )

    def _read(self, ctx: ToolContext, raw: str, offset: int, limit: int) -> ToolResult:
        path = confine(ctx, raw)
        if ctx.is_hidden(path):
            raise ToolError(f"{raw} is kept from the agent by a permission rule (a secret file)")
        if path.is_dir():
            return _list_folder(ctx, raw, path, offset, limit)
        lines: list[str] = []
        size = 0
        more = False
        with _open_regular(ctx, raw, path) as handle:
            if b"\x00" in handle.read(_SNIFF):
                raise ToolError(f"{raw} is a binary file")
            handle.seek(0)
            for number, raw_line in enumerate(handle, start=1):
                if number < offset:
                    continue
                if len(lines) >= limit or size > READ_OUTPUT_LIMIT:
                    more = True
                    break
                line = raw_line.decode("utf-8", errors="replace").rstrip("\r\n")
                if len(line) > LINE_LIMIT:
                    line = line[:LINE_LIMIT] + f"... ({len(line) - LINE_LIMIT} more characters)"
                text = f"{number:6}\t{line}"
                lines.append(text)
                size += len(text) + 1
        if not lines:
            if offset > 1:
                raise ToolError(f"{raw} has fewer than {offset} lines")
            return ToolResult("(empty file)", metadata={"path": ctx.display(path), "lines": 0})
        counted = {"path": ctx.display(path), "lines": len(lines)}
        return _page(lines, offset, "more lines follow" if more else "", counted)


class WriteTool(Tool):
    name = "write"
    description = (
        "Create or replace a file of the workspace with the given content "
        "(parent folders are created)."
    )
    parameters = arguments(
        ["path", "content"],
        path={"type": "string", "minLength": 1},
        content={"type": "string"},
    )

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await asyncio.to_thread(self._write, ctx, args["path"], args["content"])

    def _write(self, ctx: ToolContext, raw: str, content: str) -> ToolResult:
        path = confine(ctx, raw)
        if path.is_dir():
            raise ToolError(f"{raw} is a directory")
        data = content.encode("utf-8")
        if len(data) > WRITE_LIMIT:
            raise ToolError(f"content is larger than {WRITE_LIMIT} bytes")
        created = not path.exists()
        _atomic_write(ctx, path, data)
        verb = "Created" if created else "Wrote"
        shown = ctx.display(path)
        return ToolResult(
            f"{verb} {shown} ({len(data)} bytes)",
            metadata={"path": shown, "bytes": len(data), "created": created},
        )


class EditTool(Tool):
    name = "edit"
    description = (
        "Replace exact text in a file of the workspace. `old` must appear exactly once "
        "unless `all` is true; include enough surrounding lines to make it unique."
    )
    parameters = arguments(
        ["path", "old", "new"],
        path={"type": "string", "minLength": 1},
        old={"type": "string", "minLength": 1, "description": "Exact text to replace"},
        new={"type": "string", "description": "Replacement text"},
        all={"type": "boolean", "description": "Replace every occurrence"},
    )

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await asyncio.to_thread(
            self._edit, ctx, args["path"], args["old"], args["new"], args.get("all", False)
        )

    def _edit(self, ctx: ToolContext, raw: str, old: str, new: str, every: bool) -> ToolResult:
        if old == new:
            raise ToolError("old and new are the same text; nothing to change")
        path = confine(ctx, raw)
        with _open_regular(ctx, raw, path) as handle:
            if os.fstat(handle.fileno()).st_size > EDIT_FILE_LIMIT:
                raise ToolError(f"{raw} is larger than {EDIT_FILE_LIMIT} bytes")
            raw_bytes = handle.read(EDIT_FILE_LIMIT + 1)
        try:
            text = raw_bytes.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ToolError(f"{raw} is not UTF-8 text") from exc
        if old not in text and "\r\n" in text and "\n" in old:
            # The model writes LF; a CRLF file still matches, and keeps its line ends.
            old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        count = text.count(old)
        if count == 0:
            raise ToolError(f"old text not found in {raw}; read the file and copy the text exactly")
        if count > 1 and not every:
            raise ToolError(
                f"old text appears {count} times in {raw}; add surrounding lines to make it "
                "unique, or set all to true"
            )
        _atomic_write(ctx, path, text.replace(old, new).encode("utf-8"))
        shown = ctx.display(path)
        noun = "occurrence" if count == 1 else "occurrences"
        return ToolResult(
            f"Edited {shown}: replaced {count} {noun}",
            metadata={"path": shown, "replacements": count},
        )
