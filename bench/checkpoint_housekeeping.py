"""Checkpoint housekeeping figures. Prints a table; never passes or fails on time.

One generated tree, T turns that each edit a few files (a snapshot before and after, as the
runner takes them), recorded twice in the same run: in a shadow repository left alone (the
baseline, every object loose forever) and in one tidied as the service tidies it (retention
of the last R turns under the kept ref, a repack when it lost snapshots or is crowded) every
E turns (its rate limit). Printed: each repository's size and object counts, the time of a
restore (every edited file written back as the oldest kept turn had it, and back to the
newest), and what one housekeeping costs (the wait a snapshot could meet).

Run: .venv/bin/python bench/checkpoint_housekeeping.py [--files 2000] [--turns 200]
     [--keep 100] [--every 10] [--runs 5]
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
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from desktop.checkpoints.housekeeping import Retention, crowded, keep, repack  # noqa: E402
from desktop.checkpoints.revert import write  # noqa: E402
from desktop.checkpoints.shadow import ShadowRepo  # noqa: E402
from desktop.checkpoints.snapshot import snapshot  # noqa: E402

EDITS = 3  # files a turn edits


def generate(root: Path, files: int) -> list[Path]:
    per_dir = 100
    out = []
    for i in range(files):
        folder = root / f"pkg{i // per_dir:04d}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"mod{i % per_dir:03d}.py"
        path.write_text(f"# module {i}\n" + "x = 1\n" * 30)
        out.append(path)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return out


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def objects(repo: ShadowRepo) -> str:
    raw = subprocess.run(
        ["git", "count-objects", "-v"], env=repo.env, cwd=repo.directory, capture_output=True
    ).stdout.decode()
    counts = dict(line.split(": ", 1) for line in raw.splitlines())
    return f"{counts['count']} loose, {counts['in-pack']} packed in {counts['packs']} packs"


async def restore_ms(repo: ShadowRepo, old: str, new: str, paths: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        await write(repo, dict.fromkeys(paths, old))
        times.append((time.perf_counter() - began) * 1000)
        await write(repo, dict.fromkeys(paths, new))
    return statistics.median(times)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--keep", type=int, default=100)
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    retention = Retention(turns=args.keep)
    tmp = Path(tempfile.mkdtemp(prefix="desk-hkbench-"))
    try:
        tree = tmp / "tree"
        files = generate(tree, args.files)
        plain = ShadowRepo(tmp / "plain", str(tree))
        tidied = ShadowRepo(tmp / "tidied", str(tree))
        turns: list[tuple[str, str]] = []  # (start, end) per turn, the same in both
        chores: list[float] = []
        edited: set[str] = set()
        for turn in range(args.turns):
            start = await snapshot(plain)
            assert await snapshot(tidied) == start
            for k in range(EDITS):
                path = files[(turn * 7 + k * 131) % len(files)]
                with path.open("a") as f:
                    f.write(f"y = {turn}  # turn {turn}\n" * 3)
                edited.add(path.relative_to(tree).as_posix())
            end = await snapshot(plain)
            assert await snapshot(tidied) == end
            turns.append((start, end))
            if (turn + 1) % args.every == 0:
                began = time.perf_counter()
                kept = {t for pair in turns[-retention.turns :] for t in pair}
                if await keep(tidied, kept) or await crowded(tidied, retention):
                    await repack(tidied, "now")  # the service's grace is an hour
                chores.append((time.perf_counter() - began) * 1000)
        oldest_kept = turns[-retention.turns][0]
        newest = turns[-1][1]
        paths = sorted(edited)
        sizes = {r: du(r.git_dir) for r in (plain, tidied)}
        restores = {
            r: await restore_ms(r, oldest_kept, newest, paths, args.runs) for r in (plain, tidied)
        }
        print(f"{args.files} files, {args.turns} turns of {EDITS} one-file edits each;")
        print(f"housekeeping every {args.every} turns, keeping the last {args.keep} turns")
        print(f"restore: {len(paths)} files to the oldest kept turn (median of {args.runs})")
        print(f"\n{'':34}{'no housekeeping':>18}{'housekeeping':>16}{'ratio':>8}")
        a, b = sizes[plain] / 1e6, sizes[tidied] / 1e6
        print(f"{'shadow repository size (MB)':34}{a:18.2f}{b:16.2f}{b / a:8.2f}")
        a, b = restores[plain], restores[tidied]
        print(f"{'restore time (ms)':34}{a:18.1f}{b:16.1f}{b / a:8.2f}")
        print(f"\n  objects, no housekeeping: {objects(plain)}")
        print(f"  objects, housekeeping:    {objects(tidied)}")
        print(
            f"  one housekeeping: median {statistics.median(chores):.0f} ms, "
            f"max {max(chores):.0f} ms ({len(chores)} runs)"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
