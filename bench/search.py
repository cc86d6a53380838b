"""glob and grep figures on a JavaScript-shaped project. Prints a table; never passes or fails.

A project with a .gitignore and a 10,000-file `node_modules` (and a few hundred source files):
`glob **/*.js` and `grep` for a word, through ripgrep and through the Python walk, with the
ignore rules (what the model gets by default) against the same search with
`include_ignored: true` (the baseline, measured in the same run: every file walked, what
glob did before it followed .gitignore), each the median of R runs, with the result count.

Run: .venv/bin/python bench/search.py [--files 10000] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from desktop.tools.base import Tool, ToolContext, run_tool  # noqa: E402
from desktop.tools.search import GlobTool, GrepTool  # noqa: E402


def generate(root: Path, files: int, sources: int) -> None:
    (root / ".git").mkdir()
    (root / ".gitignore").write_text("node_modules/\ndist/\n")
    for i in range(files):
        folder = root / "node_modules" / f"pkg{i // 50:04d}" / "lib"
        if i % 50 == 0:
            folder.mkdir(parents=True)
        (folder / f"m{i % 50}.js").write_text(f"export function f{i}() {{ return 'token{i}' }}\n")
    for i in range(sources):
        folder = root / "src" / f"part{i // 20:02d}"
        if i % 20 == 0:
            folder.mkdir(parents=True)
        (folder / f"c{i % 20}.js").write_text(f"import x from 'pkg'\nconst token{i} = {i}\n")


async def timed(tool: Tool, args: dict[str, Any], ctx: ToolContext, runs: int) -> tuple[float, int]:
    times: list[float] = []
    count = 0
    for _ in range(runs):
        start = time.perf_counter()
        result = await run_tool(tool, args, ctx)
        times.append(time.perf_counter() - start)
        count = int(result.metadata.get("count", 0))
    return statistics.median(times) * 1000, count


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--sources", type=int, default=300)
    parser.add_argument("--runs", type=int, default=5)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="desk-bench-search-") as tmp:
        root = Path(tmp)
        generate(root, opts.files, opts.sources)
        ctx = ToolContext(root=root)
        tools: list[tuple[str, Tool, dict[str, Any]]] = [
            ("glob **/*.js", GlobTool(), {"pattern": "**/*.js"}),
            ("grep token (python)", GrepTool(use_ripgrep=False), {"pattern": "token1"}),
        ]
        if shutil.which("rg"):
            tools.insert(1, ("grep token (ripgrep)", GrepTool(), {"pattern": "token1"}))
        print(
            f"{opts.files} files in node_modules (ignored), {opts.sources} in src; median of "
            f"{opts.runs} runs"
        )
        print(f"{'search':24} {'ignore rules':>14} {'all files':>14} {'speed-up':>9}  results")
        for name, tool, args in tools:
            kept, kept_count = await timed(tool, args, ctx, opts.runs)
            every, every_count = await timed(
                tool, {**args, "include_ignored": True}, ctx, opts.runs
            )
            print(
                f"{name:24} {kept:11.1f} ms {every:11.1f} ms {every / kept:8.1f}x  "
                f"{kept_count} / {every_count}"
            )


if __name__ == "__main__":
    asyncio.run(main())
