"""The shadow repository of one session directory: a git directory of its own in the data
dir, with its own index, whose work tree is the session's directory.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from desktop.checkpoints.git import run_git
from desktop.config import ensure_private_dir

# Settings of every shadow repository: bytes as they are (no line-ending or path quoting
# rewrites), modes and symlinks recorded, no automatic gc (housekeeping repacks, once it
# has hung the kept snapshots under a ref), git's untracked cache for fast scans.
_CONFIG = (
    ("core.autocrlf", "false"),
    ("core.safecrlf", "false"),
    ("core.filemode", "true"),
    ("core.symlinks", "true"),
    ("core.quotepath", "false"),
    ("core.untrackedCache", "true"),
    ("core.fsmonitor", "false"),
    ("core.excludesFile", os.devnull),
    ("gc.auto", "0"),
    ("advice.addEmbeddedRepo", "false"),
    ("advice.addIgnoredFile", "false"),
)


def _shared_folders() -> set[str]:
    """Folders that hold everything rather than a project: never recorded."""
    return {os.path.realpath(p) for p in ("/", os.path.expanduser("~"), tempfile.gettempdir())}


def repo_name(directory: str) -> str:
    """The shadow repository's folder name for a session directory (its real path)."""
    return hashlib.sha256(directory.encode("utf-8", "surrogateescape")).hexdigest()[:24]


def is_repo_name(name: str) -> bool:
    return len(name) == 24 and all(c in "0123456789abcdef" for c in name)


def _exclusions(directory: str, private: Sequence[Path]) -> str:
    """info/exclude lines for Desk's own folders inside the session directory."""
    lines = []
    for folder in private:
        try:
            inside = folder.resolve().relative_to(Path(directory).resolve())
        except ValueError:
            continue
        lines.append(f"/{inside.as_posix()}/\n" if str(inside) != "." else "*\n")
    return "".join(lines)


class ShadowRepo:
    def __init__(self, root: Path, directory: str, private: Sequence[Path] = ()) -> None:
        self.directory = directory
        self.private = private  # Desk's own folders (the data dir): never snapshotted
        self.git_dir = root / repo_name(directory)
        self.lock = asyncio.Lock()
        # Not recorded: a shared folder (the home folder, /, the temp dir) or one over the
        # first snapshot's limits.
        self.off = directory in _shared_folders()
        self._ready = False
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.git_dir),
            "LC_ALL": "C",
            "GIT_DIR": str(self.git_dir),
            "GIT_WORK_TREE": directory,
            "GIT_INDEX_FILE": str(self.git_dir / "index"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_LITERAL_PATHSPECS": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_AUTHOR_NAME": "Desk",
            "GIT_AUTHOR_EMAIL": "desk@localhost",
            "GIT_COMMITTER_NAME": "Desk",
            "GIT_COMMITTER_EMAIL": "desk@localhost",
        }

    async def git(self, *args: str, stdin: bytes | None = None) -> bytes:
        await self.ensure()
        return await run_git(args, self.env, stdin=stdin, cwd=self.directory)

    async def ensure(self) -> None:
        """Create the repository on first use; a lock file a killed process left is removed
        (one service owns the data dir, and this process has not started a git call yet)."""
        if self._ready:
            return
        if not await asyncio.to_thread(os.path.isdir, self.directory):
            raise FileNotFoundError(f"the session directory {self.directory!r} is gone")
        fresh = not await asyncio.to_thread((self.git_dir / "HEAD").exists)
        if fresh:
            await asyncio.to_thread(ensure_private_dir, self.git_dir.parent)
            await asyncio.to_thread(self.git_dir.mkdir, mode=0o700, exist_ok=True)
            await run_git(("init", "--quiet", "--template="), self.env, cwd=self.directory)
            for key, value in _CONFIG:
                await run_git(("config", key, value), self.env, cwd=self.directory)
        await asyncio.to_thread(_unlink, self.git_dir / "index.lock")
        exclude = _exclusions(self.directory, [self.git_dir, *self.private])
        await asyncio.to_thread(_write, self.git_dir / "info" / "exclude", exclude)
        self._ready = True

    def forget(self) -> None:
        """The repository was removed: the next use creates it afresh."""
        self._ready = False


def _unlink(path: Path) -> None:
    path.unlink(missing_ok=True)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)


class ShadowRepos:
    """The shadow repositories under one root, one object (and lock) per directory."""

    def __init__(self, root: Path, private: Sequence[Path] = ()) -> None:
        self.root = root
        self.private = private
        self._repos: dict[str, ShadowRepo] = {}

    def of(self, directory: str) -> ShadowRepo:
        found = self._repos.get(directory)
        if found is None:
            found = self._repos[directory] = ShadowRepo(self.root, directory, self.private)
        return found

    def known(self) -> Sequence[ShadowRepo]:
        return list(self._repos.values())
