"""Snapshots: the session directory's files as one git tree id in its shadow repository,
reading only what changed since the last one.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence

from desktop.checkpoints.git import nul_input, nul_list
from desktop.checkpoints.shadow import ShadowRepo

MAX_FILE_BYTES = 10 * 1024 * 1024  # larger files are not snapshotted (build outputs, media)
# Above this many changed files (a first snapshot), their objects are streamed into one pack
# (git's bulk check-in, for files over core.bigFileThreshold) instead of a loose file each.
BULK = 1000
# A directory larger than this at its first snapshot (a home folder, /tmp) is not recorded:
# copying it into the data dir would cost minutes and gigabytes before the first tool runs.
MAX_FIRST_FILES = 50_000
MAX_FIRST_BYTES = 500 * 1024 * 1024


class TooLarge(Exception):
    """The directory is over the first snapshot's limits: checkpoints are off there."""


async def snapshot(repo: ShadowRepo) -> str:
    """The tree id of the directory as it is now (call with `repo.lock` held)."""
    listed = await repo.git("ls-files", "-z", "--others", "--modified", "--exclude-standard")
    paths = list(dict.fromkeys(nul_list(listed)))
    if paths:
        small, large, size = await asyncio.to_thread(_split_by_size, repo.directory, paths)
        first = not await asyncio.to_thread((repo.git_dir / "index").exists)
        if first and (len(small) > MAX_FIRST_FILES or size > MAX_FIRST_BYTES):
            raise TooLarge(f"{repo.directory}: {len(small)} files, {size >> 20} MiB")
        # update-index takes the paths literally: a path gone by now is dropped (--remove),
        # an embedded repository's `name/` is skipped.
        bulk = ("-c", "core.bigFileThreshold=1") if len(small) > BULK else ()
        if small:
            await repo.git(
                *bulk, "update-index", "--add", "--remove", "-z", "--stdin",
                stdin=nul_input(small),
            )  # fmt: skip
        if large:
            await repo.git(
                "update-index", "--force-remove", "-z", "--stdin", stdin=nul_input(large)
            )
    return (await repo.git("write-tree")).decode().strip()


def _split_by_size(root: str, paths: Sequence[str]) -> tuple[list[str], list[str], int]:
    """The paths at most MAX_FILE_BYTES, the larger ones, the bytes of the first."""
    small: list[str] = []
    large: list[str] = []
    total = 0
    for path in paths:
        try:
            size = os.lstat(os.path.join(root, path)).st_size
        except OSError:
            size = 0  # deleted: its removal is recorded
        if size > MAX_FILE_BYTES:
            large.append(path)
        else:
            small.append(path)
            total += size
    return small, large, total


async def ignored(repo: ShadowRepo) -> list[str]:
    """The paths the directory's .gitignore files leave out of snapshots (an ignored folder
    as one `name/` entry)."""
    raw = await repo.git(
        "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"
    )
    return sorted(nul_list(raw))
