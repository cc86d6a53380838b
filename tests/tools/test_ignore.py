"""glob and grep follow the project's .gitignore files and the person's global excludes,
through ripgrep and through the Python walk alike, unless ignored files are asked for."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from desktop.tools.base import ToolContext, run_tool
from desktop.tools.files import ReadTool
from desktop.tools.ignore import Ignores, decide, parse_lines
from desktop.tools.search import GlobTool, GrepTool

GLOB = GlobTool()
READ = ReadTool()
RG = shutil.which("rg")


def grep_tools() -> list[GrepTool]:
    assert RG, "ripgrep must be installed for the ripgrep half of these tests (apt: ripgrep)"
    return [GrepTool(RG), GrepTool(use_ripgrep=False)]


@pytest.fixture(autouse=True)
def global_excludes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home of the test's own, whose global excludes file ignores `*.swp`."""
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "ignore").write_text("*.swp\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    return home


@pytest.fixture(params=["repository", "plain folder"])
def project(workspace: Path, request: pytest.FixtureRequest) -> Path:
    if request.param == "repository":
        (workspace / ".git").mkdir()
    (workspace / ".gitignore").write_text("node_modules/\n/build\n*.log\n!keep.log\n")
    for i in range(30):
        package = workspace / "node_modules" / f"pkg{i}"
        package.mkdir(parents=True)
        (package / "index.js").write_text("export const needle = 1\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "out.js").write_text("needle\n")
    (workspace / "src" / "build").mkdir(parents=True)  # /build is anchored: this one is kept
    (workspace / "src" / "build" / "b.js").write_text("needle\n")
    (workspace / "src" / "app.js").write_text("const needle = 2\n")
    (workspace / "src" / "debug.log").write_text("needle\n")
    (workspace / "src" / "keep.log").write_text("needle\n")
    (workspace / "src" / "app.js.swp").write_text("needle\n")
    (workspace / "src" / "gen").mkdir()
    (workspace / "src" / "gen" / ".gitignore").write_text("*.js\n")
    (workspace / "src" / "gen" / "made.js").write_text("needle\n")
    return workspace


KEPT = ["src/app.js", "src/build/b.js", "src/keep.log"]


def paths(output: str) -> list[str]:
    return sorted(line.split(":")[0] for line in output.splitlines() if not line.startswith("("))


async def test_glob_leaves_ignored_files_out(ctx: ToolContext, project: Path) -> None:
    result = await run_tool(GLOB, {"pattern": "**/*"}, ctx)
    assert paths(result.output) == sorted([*KEPT, ".gitignore", "src/gen/.gitignore"])
    scripts = await run_tool(GLOB, {"pattern": "**/*.js"}, ctx)
    assert paths(scripts.output) == ["src/app.js", "src/build/b.js"]


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
async def test_grep_leaves_ignored_files_out(ctx: ToolContext, project: Path, engine: str) -> None:
    tool = grep_tools()[0 if engine == "ripgrep" else 1]
    result = await run_tool(tool, {"pattern": "needle"}, ctx)
    assert paths(result.output) == KEPT


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
async def test_ignored_files_are_searched_when_asked_for(
    ctx: ToolContext, project: Path, engine: str
) -> None:
    tool = grep_tools()[0 if engine == "ripgrep" else 1]
    every = await run_tool(tool, {"pattern": "needle", "include_ignored": True}, ctx)
    found = paths(every.output)
    assert len([p for p in found if p.startswith("node_modules/")]) == 30
    assert {"build/out.js", "src/debug.log", "src/gen/made.js", "src/app.js.swp"} <= set(found)
    inside = await run_tool(tool, {"pattern": "needle", "path": "node_modules/pkg3"}, ctx)
    assert paths(inside.output) == ["node_modules/pkg3/index.js"]
    globbed = await run_tool(
        GLOB, {"pattern": "node_modules/*/index.js", "include_ignored": True}, ctx
    )
    assert len(paths(globbed.output)) == 30


async def test_glob_says_when_ignored_files_were_left_out_of_an_empty_answer(
    ctx: ToolContext, project: Path
) -> None:
    result = await run_tool(GLOB, {"pattern": "node_modules/**/*.js"}, ctx)
    assert result.output.startswith("No files found")
    assert "include_ignored" in result.output


def test_gitignore_lines_read_as_git_reads_them() -> None:
    rules = parse_lines("# comment\n\n*.o\n!main.o\n/top\ndocs/*.md\nout/\n\\#hash\n")
    assert decide(rules, "a/b.o", False) is True
    assert decide(rules, "a/main.o", False) is False
    assert decide(rules, "top", True) is True
    assert decide(rules, "a/top", True) is None
    assert decide(rules, "docs/x.md", False) is True
    assert decide(rules, "a/docs/x.md", False) is None
    assert decide(rules, "out", True) is True
    assert decide(rules, "out", False) is None
    assert decide(rules, "#hash", False) is True


def test_a_deeper_gitignore_can_re_include_and_the_info_exclude_counts(workspace: Path) -> None:
    (workspace / ".git" / "info").mkdir(parents=True)
    (workspace / ".git" / "info" / "exclude").write_text("secret-notes\n")
    (workspace / ".gitignore").write_text("*.txt\n")
    (workspace / "docs").mkdir()
    (workspace / "docs" / ".gitignore").write_text("!readme.txt\n")
    ignores = Ignores(workspace / "docs")
    assert ignores.top == workspace
    assert ignores.ignored(workspace / "a.txt", False)
    assert not ignores.ignored(workspace / "docs" / "readme.txt", False)
    assert ignores.ignored(workspace / "docs" / "other.txt", False)
    assert ignores.ignored(workspace / "secret-notes", True)


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
async def test_paths_a_deny_rule_hides_are_left_out_of_every_answer(
    workspace: Path, engine: str
) -> None:
    (workspace / ".env").write_text("KEY=hidden-value\n")
    (workspace / "app.py").write_text("KEY = 'shown-value'\n")
    ctx = ToolContext(root=workspace, hidden=lambda path: path.endswith(".env"))
    tool = grep_tools()[0 if engine == "ripgrep" else 1]
    found = await run_tool(tool, {"pattern": "KEY", "include_ignored": True}, ctx)
    assert paths(found.output) == ["app.py"]
    assert "hidden-value" not in found.output
    listed = await run_tool(GLOB, {"pattern": "*", "include_ignored": True}, ctx)
    assert paths(listed.output) == ["app.py"]
    folder = await run_tool(READ, {"path": "."}, ctx)
    assert folder.output.splitlines() == ["app.py"]
    refused = await run_tool(READ, {"path": ".env"}, ctx)
    assert refused.error
    assert "hidden-value" not in refused.output
