"""glob and grep over a real folder; grep through ripgrep and through Python alike."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from desktop.tools.base import ToolContext, run_tool
from desktop.tools.search import GLOB_LIMIT, GREP_LIMIT, GlobTool, GrepTool

GLOB = GlobTool()
RG = shutil.which("rg")


def grep_tools() -> list[GrepTool]:
    assert RG, "ripgrep must be installed for the ripgrep half of these tests (apt: ripgrep)"
    return [GrepTool(RG), GrepTool(use_ripgrep=False)]


@pytest.fixture
def tree(workspace: Path) -> Path:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("import os\n\ndef main():\n    return os.getcwd()\n")
    (workspace / "src" / "util.py").write_text("def helper():\n    return 42\n")
    (workspace / "README.md").write_text("# Title\nmain entry\n")
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("def main in git\n")
    (workspace / "blob.bin").write_bytes(b"def main\x00\x01")
    os.utime(workspace / "src" / "util.py", (1_000_000_000, 1_000_000_000))
    return workspace


async def test_glob_finds_files_newest_first_and_skips_git(ctx: ToolContext, tree: Path) -> None:
    result = await run_tool(GLOB, {"pattern": "**/*.py"}, ctx)
    assert result.output.splitlines() == ["src/app.py", "src/util.py"]
    every = await run_tool(GLOB, {"pattern": "**/*"}, ctx)
    assert ".git/config" not in every.output


async def test_glob_in_a_subfolder_and_with_no_match(ctx: ToolContext, tree: Path) -> None:
    assert (await run_tool(GLOB, {"pattern": "*.py", "path": "src"}, ctx)).output.count(".py") == 2
    assert (await run_tool(GLOB, {"pattern": "*.rs"}, ctx)).output == "No files found"


async def test_glob_refuses_patterns_and_folders_that_leave_the_workspace(
    ctx: ToolContext, tree: Path
) -> None:
    for args in ({"pattern": "../*"}, {"pattern": "/etc/*"}, {"pattern": "*", "path": ".."}):
        result = await run_tool(GLOB, args, ctx)
        assert result.error, args


async def test_glob_does_not_list_through_a_symlink_to_outside(
    ctx: ToolContext, tree: Path
) -> None:
    outside = tree.parent / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("x")
    (tree / "escape").symlink_to(outside)
    result = await run_tool(GLOB, {"pattern": "**/*.py"}, ctx)
    assert "secret.py" not in result.output


async def test_glob_caps_its_listing_and_says_how_many_more(
    ctx: ToolContext, workspace: Path
) -> None:
    for i in range(GLOB_LIMIT + 5):
        (workspace / f"f{i}.txt").touch()
    result = await run_tool(GLOB, {"pattern": "*.txt"}, ctx)
    assert result.output.endswith("(5 more not shown; narrow the pattern)")


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
async def test_grep_prints_path_line_text_and_skips_git_and_binaries(
    ctx: ToolContext, tree: Path, engine: str
) -> None:
    tool = grep_tools()[0 if engine == "ripgrep" else 1]
    result = await run_tool(tool, {"pattern": r"def \w+\("}, ctx)
    assert sorted(result.output.splitlines()) == [
        "src/app.py:3:def main():",
        "src/util.py:1:def helper():",
    ]


async def test_ripgrep_and_python_give_the_same_lines(ctx: ToolContext, tree: Path) -> None:
    outputs = []
    for tool in grep_tools():
        for args in (
            {"pattern": "main"},
            {"pattern": "return", "glob": "*.py"},
            {"pattern": "o", "path": "src/app.py"},
            {"pattern": "zzz"},
        ):
            result = await run_tool(tool, args, ctx)
            outputs.append(sorted(result.output.splitlines()))
    assert outputs[:4] == outputs[4:]
    assert outputs[3] == ["No matches found"]


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
async def test_grep_with_an_invalid_regex_is_an_error_result(
    ctx: ToolContext, tree: Path, engine: str
) -> None:
    tool = grep_tools()[0 if engine == "ripgrep" else 1]
    result = await run_tool(tool, {"pattern": "(unclosed"}, ctx)
    assert result.error
    assert result.output.startswith("grep failed: ")


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
async def test_grep_outside_the_workspace_is_refused(
    ctx: ToolContext, tree: Path, engine: str
) -> None:
    tool = grep_tools()[0 if engine == "ripgrep" else 1]
    result = await run_tool(tool, {"pattern": "root", "path": "/etc"}, ctx)
    assert result.error
    assert "outside the workspace" in result.output


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
async def test_grep_shows_the_first_matches_and_counts_the_rest(
    ctx: ToolContext, workspace: Path, engine: str
) -> None:
    tool = grep_tools()[0 if engine == "ripgrep" else 1]
    (workspace / "many.txt").write_text("".join(f"hit {i}\n" for i in range(GREP_LIMIT + 1500)))
    result = await run_tool(tool, {"pattern": "hit"}, ctx)
    lines = result.output.splitlines()
    assert lines[0] == "many.txt:1:hit 0"
    assert len(lines) == GREP_LIMIT + 1
    assert lines[-1] == "(1500 more matching lines not shown; narrow the search)"
    assert result.metadata["count"] == GREP_LIMIT + 1500
