"""Checkpoint snapshot figures. Prints a table; never passes or fails on time.

On a generated tree of N files (a git repository, committed) and on this repository:
- the first snapshot (every file hashed into the shadow repository),
- an incremental snapshot after a one-file change (this repository: after no change, it is
  not ours to edit), against `git status --porcelain` on the same tree in the same run (the
  baseline: the same scan of the same files by git itself; target within 2x, under 150 ms),
- the extra time a snapshot adds to a step that changed one file (the snapshot after it and
  the diff listing its changed files, what the runner adds to the step),
- the shadow repository's growth over T turns of one-file edits.

Run: .venv/bin/python bench/snapshots.py [--files 20000] [--runs 7] [--turns 100]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from desktop.checkpoints.diff import changed  # noqa: E402
from desktop.checkpoints.shadow import ShadowRepo  # noqa: E402
from desktop.checkpoints.snapshot import snapshot  # noqa: E402


def generate(root: Path, files: int) -> None:
    per_dir = 100
    for i in range(files):
        folder = root / f"pkg{i // per_dir:04d}"
        if i % per_dir == 0:
            folder.mkdir(parents=True)
        (folder / f"mod{i % per_dir:03d}.py").write_text(f"# module {i}\n" + "x = 1\n" * 30)
    (root / ".gitignore").write_text("build/\n")
    git = ["git", "-C", str(root), "-c", "user.name=b", "-c", "user.email=b@b"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "tree"], check=True)
    version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout
    print(f"generated {files} files; {version.strip()}")


async def timed(work: Callable[[], Awaitable[object]]) -> float:
    start = time.perf_counter()
    await work()
    return (time.perf_counter() - start) * 1000


async def git_status(root: Path) -> None:
    process = await asyncio.create_subprocess_exec(
        "git", "-C", str(root), "status", "--porcelain",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    await process.wait()


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


async def measure(name: str, root: Path, data: Path, runs: int, edit: Path | None) -> None:
    repo = ShadowRepo(data, str(root))
    first = await timed(lambda: snapshot(repo))
    incremental: list[float] = []
    status: list[float] = []
    added: list[float] = []
    for run in range(runs):
        if edit is not None:
            with edit.open("a") as f:
                f.write(f"# edit {run}\n")
        await git_status(root)  # both see the same tree: git's own index refreshed too
        status.append(await timed(lambda: git_status(root)))
        if edit is not None:
            with edit.open("a") as f:
                f.write(f"# step {run}\n")
        start = await snapshot(repo)
        if edit is not None:
            with edit.open("a") as f:
                f.write(f"# again {run}\n")
        began = time.perf_counter()
        end = await snapshot(repo)
        incremental.append((time.perf_counter() - began) * 1000)
        await changed(repo, start, end)
        added.append((time.perf_counter() - began) * 1000)
    inc, base = statistics.median(incremental), statistics.median(status)
    print(f"\n{name}")
    print(f"  first snapshot                          {first:9.1f} ms")
    print(f"  git status --porcelain (baseline)       {base:9.1f} ms")
    what = "after a one-file change" if edit is not None else "after no change"
    print(f"  incremental snapshot, {what:<17} {inc:9.1f} ms  ({inc / base:.2f}x git status)")
    print(f"  added to a step (snapshot + diff)       {statistics.median(added):9.1f} ms")


async def growth(root: Path, data: Path, turns: int) -> None:
    repo = ShadowRepo(data, str(root))
    await snapshot(repo)
    before = du(repo.git_dir)
    target = root / "pkg0000" / "mod000.py"
    edited = 0
    for turn in range(turns):
        text = f"# turn {turn}\n"
        with target.open("a") as f:
            f.write(text)
        edited += target.stat().st_size
        await snapshot(repo)
    after = du(repo.git_dir)
    print(f"\nshadow repository growth over {turns} turns of one-file edits")
    print(f"  before {before / 1e6:8.2f} MB   after {after / 1e6:8.2f} MB")
    print(f"  per turn {(after - before) / turns / 1024:8.2f} KiB", end="")
    print(f"   (the edited file's own size per turn: {edited / turns / 1024:.2f} KiB)")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--turns", type=int, default=100)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="desk-snapbench-"))
    try:
        tree = tmp / "tree"
        generate(tree, args.files)
        edit = tree / "pkg0001" / "mod001.py"
        await measure(f"generated tree, {args.files} files", tree, tmp / "data1", args.runs, edit)
        await measure("this repository", PROJECT, tmp / "data2", args.runs, None)
        await growth(tree, tmp / "data3", args.turns)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
