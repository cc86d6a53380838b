"""Tool confinement: Desk's own data and runtime dirs are out of every tool's reach whatever
the workspace, and the file opened is the file checked, even while another process swaps a
path component for a symlink."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from desktop.tools.base import ToolContext, ToolError, ToolResult, run_tool
from desktop.tools.files import EditTool, ReadTool, WriteTool
from desktop.tools.search import GlobTool, GrepTool

TOKEN = "desk-token-0123456789abcdef"
SECRET = "outside-secret-42"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A workspace that contains Desk's data and runtime dirs, as $HOME does by default."""
    data = tmp_path / ".local" / "share" / "desk"
    data.mkdir(parents=True)
    (data / "auth-token").write_text(TOKEN + "\n")
    (data / "provider-key").write_text("sk-" + TOKEN + "\n")
    runtime = tmp_path / "run" / "desk"
    runtime.mkdir(parents=True)
    (runtime / "pty-host.json").write_text('{"secret": "' + TOKEN + '"}\n')
    (tmp_path / "notes.txt").write_text("ordinary notes\n")
    return tmp_path


def context(home: Path, **changes: object) -> ToolContext:
    private = (home / ".local" / "share" / "desk", home / "run" / "desk")
    return ToolContext(root=home, private=private, **changes)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "path", [".local/share/desk/auth-token", "run/desk/pty-host.json", ".local/share/desk"]
)
async def test_read_of_desks_own_files_is_refused_whatever_the_workspace(
    home: Path, path: str
) -> None:
    for ctx in (context(home), context(home, allow_anywhere=True)):
        result = await run_tool(ReadTool(), {"path": path}, ctx)
        assert result.error
        assert "private" in result.output
        assert TOKEN not in result.output


async def test_a_symlink_in_the_workspace_to_the_token_is_refused(home: Path) -> None:
    (home / "innocent.txt").symlink_to(home / ".local" / "share" / "desk" / "auth-token")
    result = await run_tool(ReadTool(), {"path": "innocent.txt"}, context(home))
    assert result.error
    assert TOKEN not in result.output


@pytest.mark.parametrize("ripgrep", [True, False])
async def test_grep_and_glob_never_list_or_search_desks_own_files(
    home: Path, ripgrep: bool
) -> None:
    ctx = context(home)
    grep = await run_tool(GrepTool(use_ripgrep=ripgrep), {"pattern": "desk-token|ordinary"}, ctx)
    assert "notes.txt" in grep.output
    assert TOKEN not in grep.output
    direct = await run_tool(GrepTool(use_ripgrep=ripgrep), {"pattern": ".", "path": "run"}, ctx)
    assert TOKEN not in direct.output
    listed = await run_tool(GlobTool(), {"pattern": "**/*"}, ctx)
    assert "notes.txt" in listed.output
    assert "auth-token" not in listed.output
    assert "pty-host.json" not in listed.output


async def test_write_and_edit_of_desks_own_files_are_refused(home: Path) -> None:
    ctx = context(home)
    token = home / ".local" / "share" / "desk" / "auth-token"
    written = await run_tool(WriteTool(), {"path": str(token), "content": "mine"}, ctx)
    edited = await run_tool(EditTool(), {"path": str(token), "old": TOKEN, "new": "mine"}, ctx)
    assert written.error
    assert edited.error
    assert token.read_text() == TOKEN + "\n"


# --- the check-then-use race: a component swapped for a symlink between check and open ----


@pytest.fixture
def swapping(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """`ws/d` flips between a real folder (with `f`) and a symlink to a folder outside, and
    `ws/g` between a real file and a symlink to a file outside, until the test ends."""
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f").write_text(SECRET + "\n")
    real_dir, real_file = ws / "real-d", ws / "real-g"
    real_dir.mkdir()
    (real_dir / "f").write_text("inside\n")
    real_file.write_text("inside\n")
    stop = threading.Event()

    def clear(path: Path) -> None:
        """Whatever a tool left at the name (a folder `write` made while it was missing)."""
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)

    def flip() -> None:
        while not stop.is_set():
            for name, real, target in (("d", real_dir, outside), ("g", real_file, outside / "f")):
                with contextlib.suppress(OSError):
                    clear(ws / name)
                    os.symlink(target, ws / name)  # the link takes the name
                    os.unlink(ws / name)
                    os.rename(real, ws / name)  # the real one takes it back
                    stop.wait(0.0002)  # holds the name a moment, so some calls get through
                    os.rename(ws / name, real)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # interleave the swaps with the tool's steps
    worker = threading.Thread(target=flip, daemon=True)
    worker.start()
    yield ws, outside
    stop.set()
    worker.join()
    sys.setswitchinterval(interval)


def attempt(call: Callable[[], ToolResult]) -> str:
    """The tool's answer, or its refusal: a race may make a call fail, never leak."""
    try:
        return call().output
    except (ToolError, OSError) as exc:
        return str(exc)


def test_a_racing_symlink_swap_never_lets_read_return_a_file_outside(
    swapping: tuple[Path, Path],
) -> None:
    ws, _ = swapping
    tool, ctx = ReadTool(), ToolContext(root=ws)
    answers = [
        attempt(functools.partial(tool._read, ctx, path, 1, 10))
        for _ in range(800)
        for path in ("d/f", "g")
    ]
    assert [answer for answer in answers if SECRET in answer] == []
    assert any("inside" in answer for answer in answers)


def test_a_racing_symlink_swap_never_lets_write_or_edit_land_outside(
    swapping: tuple[Path, Path],
) -> None:
    ws, outside = swapping
    write, edit, ctx = WriteTool(), EditTool(), ToolContext(root=ws)
    for number in range(800):
        attempt(lambda: write._write(ctx, "d/new.txt", f"written {number}\n"))  # noqa: B023
        attempt(lambda: edit._edit(ctx, "g", SECRET, "changed", False))
    assert sorted(path.name for path in outside.iterdir()) == ["f"]
    assert (outside / "f").read_text() == SECRET + "\n"
