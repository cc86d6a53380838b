"""Snapshots: the session directory's files as one git tree id in its shadow repository.

Only what changed since the last snapshot is read: git lists the new, modified and deleted
paths from the index's stat data, those are added, and the index is written as a tree (the
snapshot id). A file larger than MAX_FILE_BYTES is not snapshotted (left out, and dropped
from the index if it was there before): a revert leaves it as it is.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence

from desktop.checkpoints.git import GitError, nul_input, nul_list
from desktop.checkpoints.shadow import ShadowRepo

MAX_FILE_BYTES = 10 * 1024 * 1024  # larger files are not snapshotted (build outputs, media)
MAX_PATHSPECS = 1000  # above this many changed paths, git adds the whole tree in one pack


async def snapshot(repo: ShadowRepo) -> str:
    """The tree id of the directory as it is now (call with `repo.lock` held)."""
    listed = await repo.git("ls-files", "-z", "--others", "--modified", "--exclude-standard")
    paths = list(dict.fromkeys(nul_list(listed)))
    if paths:
        small, large = await asyncio.to_thread(_split_by_size, repo.directory, paths)
        if len(small) > MAX_PATHSPECS:
            # Many files (a first snapshot): streamed into one pack (git's bulk check-in for
            # files over core.bigFileThreshold) instead of one loose object file each.
            await repo.git("-c", "core.bigFileThreshold=1", "add", "-A")  # large ones: below
        elif small:
            try:
                await repo.git(
                    "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul",
                    stdin=nul_input(small),
                )  # fmt: skip
            except GitError:
                # A listed file vanished before git read it: take the whole tree instead.
                await repo.git("add", "-A")
        if large:
            await repo.git(
                "rm", "--cached", "-q", "--ignore-unmatch", "--pathspec-from-file=-",
                "--pathspec-file-nul",
                stdin=nul_input(large),
            )  # fmt: skip
    return (await repo.git("write-tree")).decode().strip()


def _split_by_size(root: str, paths: Sequence[str]) -> tuple[list[str], list[str]]:
    small: list[str] = []
    large: list[str] = []
    for path in paths:
        try:
            size = os.lstat(os.path.join(root, path)).st_size
        except OSError:
            size = 0  # deleted: its removal is recorded
        (large if size > MAX_FILE_BYTES else small).append(path)
    return small, large


async def ignored(repo: ShadowRepo) -> list[str]:
    """The paths the directory's .gitignore files leave out of snapshots (an ignored folder
    as one `name/` entry)."""
    raw = await repo.git(
        "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"
    )
    return sorted(nul_list(raw))
