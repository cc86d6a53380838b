"""Diffs between two snapshots: which files changed (added, modified, deleted, with line
counts and modes) and a unified diff per file (none for binary files)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from desktop.checkpoints.git import nul_list
from desktop.checkpoints.shadow import ShadowRepo

MAX_PATCH_BYTES = 512 * 1024  # a file's patch above this is not sent (too_large)
_STATUS = {"A": "added", "M": "modified", "T": "modified", "D": "deleted"}


@dataclass
class FileChange:
    path: str
    status: str  # added | modified | deleted
    additions: int
    deletions: int
    binary: bool
    patch: str | None = None
    too_large: bool = False

    def to_json(self, *, patch: bool = True) -> dict[str, object]:
        out: dict[str, object] = {
            "path": self.path,
            "status": self.status,
            "additions": self.additions,
            "deletions": self.deletions,
        }
        if patch:
            out["patch"] = self.patch
            if self.too_large:
                out["too_large"] = True
        return out


def _pathspec(paths: Sequence[str] | None) -> list[str]:
    return [] if paths is None else ["--", *paths]


async def changed(
    repo: ShadowRepo, start: str, end: str, paths: Sequence[str] | None = None
) -> list[FileChange]:
    """The files that differ between two trees (limited to `paths` when given), by path."""
    if start == end or paths == []:
        return []
    spec = _pathspec(paths)
    raw = nul_list(await repo.git("diff-tree", "-r", "-z", "--no-renames", start, end, *spec))
    counts = nul_list(
        await repo.git("diff-tree", "-r", "-z", "--no-renames", "--numstat", start, end, *spec)
    )
    lines: dict[str, tuple[int, int, bool]] = {}
    for entry in counts:
        plus, minus, path = entry.split("\t", 2)
        binary = plus == "-"
        lines[path] = (0 if binary else int(plus), 0 if binary else int(minus), binary)
    out: list[FileChange] = []
    for meta, path in zip(raw[0::2], raw[1::2], strict=True):
        status = _STATUS.get(meta.rsplit(" ", 1)[-1][:1], "modified")
        out.append(FileChange(path, status, *lines.get(path, (0, 0, False))))
    return out


async def with_patches(
    repo: ShadowRepo, start: str, end: str, files: list[FileChange]
) -> list[FileChange]:
    """`files` (from `changed(start, end)`, in its order) with their unified diffs."""
    if not files:
        return files
    raw = await repo.git(
        "diff-tree", "-r", "-p", "--no-renames", "--no-color", "--no-ext-diff", start, end,
        "--", *(f.path for f in files),
    )  # fmt: skip
    # git writes one `diff --git` section per file, in the order of its raw listing, and a
    # hunk line always starts with ' ', '+', '-' or '\\': the header starts a section.
    sections = raw.split(b"\ndiff --git ")
    if sections and sections[0].startswith(b"diff --git "):
        sections[0] = sections[0][len(b"diff --git ") :]
    for change, section in zip(files, sections, strict=False):
        if change.binary:
            continue
        if len(section) > MAX_PATCH_BYTES:
            change.too_large = True
            continue
        change.patch = "diff --git " + section.decode("utf-8", "replace").rstrip("\n") + "\n"
    return files
