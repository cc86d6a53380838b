"""Putting files back: which of them changed since the agent (or a revert) last wrote them
(conflicts), and writing each file as it is in a given snapshot, or removing it when that
snapshot has no such file.
"""

from __future__ import annotations

import asyncio
import os
from collections import defaultdict
from collections.abc import Mapping, Sequence

from desktop.checkpoints.diff import changed
from desktop.checkpoints.git import nul_input, nul_list
from desktop.checkpoints.shadow import ShadowRepo

CHUNK = 500  # paths per git call: a kill mid-revert lands between or inside calls alike


def by_tree(targets: Mapping[str, str]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = defaultdict(list)
    for path, tree in sorted(targets.items()):
        grouped[tree].append(path)
    return grouped


async def conflicts(repo: ShadowRepo, current: str, expected: Mapping[str, str]) -> list[str]:
    """The paths whose content or mode in `current` is not the one their expected tree
    holds."""
    found: list[str] = []
    for tree, paths in by_tree(expected).items():
        found.extend(c.path for c in await changed(repo, tree, current, paths))
    return sorted(found)


async def write(repo: ShadowRepo, targets: Mapping[str, str]) -> None:
    """Make every path of `targets` what it is in its tree (absent there: removed)."""
    for tree, paths in by_tree(targets).items():
        for at in range(0, len(paths), CHUNK):
            chunk = paths[at : at + CHUNK]
            listed = await repo.git(
                "ls-tree", "-r", "-z", "--name-only", "--full-tree", tree, "--", *chunk
            )
            present = set(nul_list(listed))
            if present:
                await repo.git(
                    "checkout", "--no-overlay", tree, "--pathspec-from-file=-",
                    "--pathspec-file-nul",
                    stdin=nul_input(sorted(present)),
                )  # fmt: skip
            gone = [p for p in chunk if p not in present]
            if gone:
                await asyncio.to_thread(_remove, repo.directory, gone)


def _remove(root: str, paths: Sequence[str]) -> None:
    """Remove files (not folders), then the folders that removal left empty."""
    parents: set[str] = set()
    for path in paths:
        full = os.path.join(root, path)
        try:
            if os.path.isdir(full) and not os.path.islink(full):
                continue
            os.unlink(full)
        except FileNotFoundError:
            pass
        parents.add(os.path.dirname(path))
    for parent in sorted(parents, key=len, reverse=True):
        while parent:
            try:
                os.rmdir(os.path.join(root, parent))
            except OSError:
                break
            parent = os.path.dirname(parent)
