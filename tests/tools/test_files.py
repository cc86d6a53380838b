"""read, write and edit on real files, confined to the workspace."""

from __future__ import annotations

import asyncio
import os
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from desktop.tools.base import ToolContext, ToolResult, run_tool
from desktop.tools.files import EditTool, ReadTool, WriteTool

READ, WRITE, EDIT = ReadTool(), WriteTool(), EditTool()


async def test_read_numbers_lines_and_pages_with_offset_and_limit(
    ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "f.txt").write_text("".join(f"l{i}\n" for i in range(1, 11)))
    whole = await run_tool(READ, {"path": "f.txt"}, ctx)
    assert whole.output.splitlines()[0] == "     1\tl1"
    assert whole.output.splitlines()[-1] == "    10\tl10"
    page = await run_tool(READ, {"path": "f.txt", "offset": 4, "limit": 3}, ctx)
    assert page.output.splitlines() == [
        "     4\tl4",
        "     5\tl5",
        "     6\tl6",
        "(more lines follow; continue with offset=7)",
    ]


async def test_read_refuses_binary_missing_and_past_the_end(
    ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "b.bin").write_bytes(b"\x7fELF\x00\x01")
    (workspace / "d").mkdir()
    (workspace / "short.txt").write_text("one\n")
    cases: list[tuple[dict[str, Any], str]] = [
        ({"path": "b.bin"}, "binary"),
        ({"path": "nope.txt"}, "does not exist"),
        ({"path": "short.txt", "offset": 5}, "fewer than 5 lines"),
    ]
    for args, says in cases:
        result = await run_tool(READ, args, ctx)
        assert result.error, result.output
        assert says in result.output, result.output


async def test_read_of_a_folder_lists_its_entries_folders_marked(
    ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "d" / "sub").mkdir(parents=True)
    (workspace / "d" / "b.txt").write_text("b")
    (workspace / "d" / "a.txt").write_text("a")
    result = await run_tool(READ, {"path": "d"}, ctx)
    assert not result.error, result.output
    assert result.output.splitlines() == ["a.txt", "b.txt", "sub/"]
    paged = await run_tool(READ, {"path": "d", "limit": 1}, ctx)
    assert paged.output.splitlines() == ["a.txt", "(2 more entries; continue with offset=2)"]
    (workspace / "empty").mkdir()
    assert (await run_tool(READ, {"path": "empty"}, ctx)).output == "(empty folder)"


async def test_read_cuts_very_long_lines(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "long.txt").write_text("x" * 5000 + "\n")
    result = await run_tool(READ, {"path": "long.txt"}, ctx)
    assert "(3000 more characters)" in result.output
    assert len(result.output) < 2100


async def test_write_creates_parents_and_reports_bytes(ctx: ToolContext, workspace: Path) -> None:
    result = await run_tool(WRITE, {"path": "a/b/c.txt", "content": "héllo"}, ctx)
    assert not result.error
    assert result.output == "Created a/b/c.txt (6 bytes)"
    assert (workspace / "a/b/c.txt").read_text() == "héllo"


async def test_write_keeps_an_existing_files_mode_and_leaves_no_temp_file(
    ctx: ToolContext, workspace: Path
) -> None:
    script = workspace / "run.sh"
    script.write_text("old")
    script.chmod(0o751)
    result = await run_tool(WRITE, {"path": "run.sh", "content": "new"}, ctx)
    assert result.output.startswith("Wrote run.sh")
    assert stat.S_IMODE(script.stat().st_mode) == 0o751
    assert script.read_text() == "new"
    assert sorted(os.listdir(workspace)) == ["run.sh"]


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/desk-test.txt", "sub/../../x.txt"])
async def test_paths_outside_the_workspace_are_refused(
    ctx: ToolContext, workspace: Path, path: str
) -> None:
    result = await run_tool(WRITE, {"path": path, "content": "x"}, ctx)
    assert result.error
    assert "outside the workspace" in result.output
    assert not (workspace.parent / "outside.txt").exists()


async def test_a_symlink_cannot_lead_outside(ctx: ToolContext, workspace: Path) -> None:
    secret = workspace.parent / "secret.txt"
    secret.write_text("top secret")
    (workspace / "link.txt").symlink_to(secret)
    (workspace / "linkdir").symlink_to(workspace.parent)
    read = await run_tool(READ, {"path": "link.txt"}, ctx)
    write = await run_tool(WRITE, {"path": "linkdir/secret.txt", "content": "pwned"}, ctx)
    assert read.error
    assert "top secret" not in read.output
    assert write.error
    assert secret.read_text() == "top secret"


async def test_a_root_the_user_allowed_is_reachable(workspace: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.md").write_text("allowed\n")
    ctx = ToolContext(root=workspace, allowed=(other,))
    result = await run_tool(READ, {"path": str(other / "notes.md")}, ctx)
    assert not result.error
    assert "allowed" in result.output


async def test_edit_replaces_a_unique_match(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "m.py").write_text("def f():\n    return 1\n")
    result = await run_tool(EDIT, {"path": "m.py", "old": "return 1", "new": "return 2"}, ctx)
    assert result.output == "Edited m.py: replaced 1 occurrence"
    assert (workspace / "m.py").read_text() == "def f():\n    return 2\n"


async def test_edit_missing_or_ambiguous_text_is_a_clear_error_and_changes_nothing(
    ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "m.py").write_text("x = 1\nx = 1\n")
    missing = await run_tool(EDIT, {"path": "m.py", "old": "y = 1", "new": "y = 2"}, ctx)
    ambiguous = await run_tool(EDIT, {"path": "m.py", "old": "x = 1", "new": "x = 2"}, ctx)
    same = await run_tool(EDIT, {"path": "m.py", "old": "x", "new": "x"}, ctx)
    assert missing.error
    assert "not found" in missing.output
    assert ambiguous.error
    assert "appears 2 times" in ambiguous.output
    assert same.error
    assert "same text" in same.output
    assert (workspace / "m.py").read_text() == "x = 1\nx = 1\n"
    every = await run_tool(EDIT, {"path": "m.py", "old": "x = 1", "new": "x = 2", "all": True}, ctx)
    assert every.output == "Edited m.py: replaced 2 occurrences"
    assert (workspace / "m.py").read_text() == "x = 2\nx = 2\n"


async def test_edit_matches_lf_text_in_a_crlf_file_and_keeps_crlf(
    ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "w.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    result = await run_tool(EDIT, {"path": "w.txt", "old": "a\nb", "new": "A\nB"}, ctx)
    assert not result.error
    assert (workspace / "w.txt").read_bytes() == b"A\r\nB\r\nc\r\n"


async def test_edit_of_a_missing_or_non_utf8_file_is_an_error(
    ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "latin.txt").write_bytes(b"caf\xe9\n")
    assert (
        "does not exist"
        in (await run_tool(EDIT, {"path": "no", "old": "a", "new": "b"}, ctx)).output
    )
    assert (
        "not UTF-8"
        in (await run_tool(EDIT, {"path": "latin.txt", "old": "caf", "new": "x"}, ctx)).output
    )


async def test_a_fifo_is_refused_instead_of_blocking(ctx: ToolContext, workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")
    result = await asyncio.wait_for(run_tool(READ, {"path": "pipe"}, ctx), 10)
    assert result.error
    assert "not a regular file" in result.output


class _ThreadRecordingRead(ReadTool):
    threads: list[int]

    def _read(self, ctx: ToolContext, raw: str, offset: int, limit: int) -> ToolResult:
        self.threads.append(threading.get_ident())
        return super()._read(ctx, raw, offset, limit)


class _ThreadRecordingEdit(EditTool):
    threads: list[int]

    def _edit(self, ctx: ToolContext, raw: str, old: str, new: str, every: bool) -> ToolResult:
        self.threads.append(threading.get_ident())
        return super()._edit(ctx, raw, old, new, every)


async def test_file_io_runs_in_a_worker_thread_not_on_the_event_loop(
    ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "f.txt").write_text("a\n")
    read, edit = _ThreadRecordingRead(), _ThreadRecordingEdit()
    read.threads, edit.threads = [], []
    assert not (await run_tool(read, {"path": "f.txt"}, ctx)).error
    assert not (await run_tool(edit, {"path": "f.txt", "old": "a", "new": "b"}, ctx)).error
    loop_thread = threading.get_ident()
    assert read.threads
    assert edit.threads
    assert loop_thread not in read.threads + edit.threads
