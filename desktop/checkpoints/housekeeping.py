"""Housekeeping of the shadow repositories: which snapshots each one keeps, repacking off the
event loop once a repository is crowded or lost snapshots, and removing the repositories no
session's directory names any more.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import desktop.checkpoints.history as history
from desktop.checkpoints.git import GitError, nul_list
from desktop.checkpoints.shadow import ShadowRepo, ShadowRepos, is_repo_name, repo_name
from desktop.events.projector import checkpoint_key
from desktop.store import sessions as q
from desktop.store.db import Store

_log = logging.getLogger("desk.checkpoints")

KEPT_REF = "refs/desk/kept"
GONE = ".gone"  # a repository being removed is renamed first: never half-used again


@dataclass(frozen=True)
class Retention:
    turns: int = 100  # per session: a revert to an older user message is refused as expired
    interval: float = 600.0  # seconds between two housekeepings of one repository
    grace: str = "1.hour.ago"  # unreferenced objects younger than this survive (a snapshot)
    loose: int = 256  # loose objects that call for a repack (git's gc --auto counts 6,700)
    packs: int = 20  # packs that call for one


RETENTION = Retention()


def kept_trees(conn: sqlite3.Connection, session_ids: Iterable[str], turns: int) -> set[str]:
    """The trees the sessions still need: their kept turns' steps, their pending reverts'
    before and after, a half-done revert's targets, a running step's start."""
    trees: set[str] = set()
    for sid in session_ids:
        trees |= history.kept_trees(q.all_messages(conn, sid), turns)
        pending = q.kv_get(conn, checkpoint_key("pending", sid))
        for revert in pending if isinstance(pending, list) else []:
            trees |= {str(revert.get("before", "")), str(revert.get("after", ""))}
        intent = q.kv_get(conn, checkpoint_key("intent", sid))
        if isinstance(intent, dict):
            trees.add(str(intent["data"].get("before", "")))
            trees |= {str(t) for t in intent["targets"].values()}
        step = q.kv_get(conn, checkpoint_key("step", sid))
        if isinstance(step, dict):
            trees.add(str(step["start"]))
    trees.discard("")
    return trees


def _users(conn: sqlite3.Connection, directory: str) -> list[str]:
    return [str(s["id"]) for s in q.list_sessions(conn) if s["directory"] == directory]


def _live_names(conn: sqlite3.Connection) -> set[str]:
    return {repo_name(str(s["directory"])) for s in q.list_sessions(conn)}


async def keep(repo: ShadowRepo, trees: Iterable[str]) -> bool:
    """Point KEPT_REF at the trees of `trees` the repository holds; True when a tree it
    kept before is kept no more (objects for a repack to prune)."""
    present = await _present(repo, sorted(set(trees)))
    before = await held(repo)
    if present:
        listing = "".join(f"040000 tree {t}\t{t}\n" for t in sorted(present))
        root = (await repo.git("mktree", stdin=listing.encode())).decode().strip()
        await repo.git("update-ref", KEPT_REF, root)
    else:
        await repo.git("update-ref", "-d", KEPT_REF)
    return bool(before - present)


async def held(repo: ShadowRepo) -> set[str]:
    """The trees KEPT_REF holds now."""
    try:
        raw = await repo.git("ls-tree", "-z", "--name-only", KEPT_REF)
    except GitError:
        return set()
    return set(nul_list(raw))


async def _present(repo: ShadowRepo, trees: list[str]) -> set[str]:
    if not trees:
        return set()
    query = "".join(f"{t}\n" for t in trees).encode()
    raw = await repo.git("cat-file", "--batch-check=%(objectname) %(objecttype)", stdin=query)
    found = (line.split() for line in raw.decode().splitlines())
    return {parts[0] for parts in found if len(parts) == 2 and parts[1] == "tree"}


async def crowded(repo: ShadowRepo, retention: Retention) -> bool:
    """git gc --auto's question: too many loose objects or packs."""
    raw = (await repo.git("count-objects", "-v")).decode()
    counts = dict(line.split(": ", 1) for line in raw.splitlines() if ": " in line)
    loose, packs = int(counts.get("count", "0")), int(counts.get("packs", "0"))
    return loose >= retention.loose or packs >= retention.packs


async def repack(repo: ShadowRepo, grace: str) -> None:
    """One pack of what a ref or the index reaches; unreachable objects older than `grace`
    are dropped."""
    await repo.git(
        "-c", "core.logAllRefUpdates=false", "-c", f"gc.pruneExpire={grace}",
        "gc", "--quiet", f"--prune={grace}",
    )  # fmt: skip


def _discard(git_dir: Path) -> None:
    """Rename the repository (one atomic step), then remove it; a kill in between leaves a
    `.gone` folder that the next sweep removes."""
    if git_dir.name.endswith(GONE):
        shutil.rmtree(git_dir, ignore_errors=True)
        return
    gone = git_dir.with_name(git_dir.name + GONE)
    if gone.exists():
        shutil.rmtree(gone, ignore_errors=True)
    try:
        os.rename(git_dir, gone)
    except FileNotFoundError:
        return
    shutil.rmtree(gone, ignore_errors=True)


def _leftovers(root: Path, live: set[str]) -> list[Path]:
    """The repository folders under root that no live session's directory names."""
    try:
        entries = list(root.iterdir())
    except FileNotFoundError:
        return []
    out = []
    for entry in entries:
        name = entry.name.removesuffix(GONE)
        if is_repo_name(name) and (entry.name.endswith(GONE) or name not in live):
            out.append(entry)
    return out


class Housekeeper:
    """The housekeeping of the repositories under one root: each run in a task it owns, one
    at a time per repository, at most once per `retention.interval` (a request within it
    waits for its end)."""

    def __init__(
        self,
        store: Store,
        repos: ShadowRepos,
        retention: Retention,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.repos = repos
        self.retention = retention
        self._clock = clock
        self._last: dict[str, float] = {}
        self._waiting: dict[str, asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._locks: dict[str, asyncio.Lock] = {}

    def request(self, directory: str) -> None:
        """Housekeeping of the directory's repository soon (now, or when its interval
        since the last one has passed)."""
        if directory in self._waiting:
            return
        last = self._last.get(directory)
        delay = 0.0 if last is None else max(0.0, last + self.retention.interval - self._clock())
        task = asyncio.create_task(self._later(directory, delay))
        self._waiting[directory] = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _later(self, directory: str, delay: float) -> None:
        try:
            if delay:
                await asyncio.sleep(delay)
        finally:
            self._waiting.pop(directory, None)
        self._last[directory] = self._clock()
        try:
            await self.tidy(directory)
        except (GitError, OSError) as exc:
            _log.warning("no housekeeping of the checkpoints of %s: %s", directory, exc)
        except Exception:
            _log.exception("no housekeeping of the checkpoints of %s", directory)

    async def tidy(self, directory: str) -> None:
        """Remove the directory's repository when no session uses the directory; otherwise
        keep what its sessions need and repack when that dropped something or git would."""
        repo = self.repos.of(directory)
        async with self._locks.setdefault(directory, asyncio.Lock()):
            if not await asyncio.to_thread((repo.git_dir / "HEAD").exists):
                return
            users = await self.store.read(lambda c: _users(c, directory))
            if not users:
                await self._remove(repo)
                return
            turns = self.retention.turns
            trees = await self.store.read(lambda c: kept_trees(c, users, turns))
            async with repo.lock:  # git's prune races a snapshot's new object folders
                if await keep(repo, trees) or await crowded(repo, self.retention):
                    await repack(repo, self.retention.grace)

    async def _remove(self, repo: ShadowRepo) -> None:
        async with repo.lock:
            if await self.store.read(lambda c: _users(c, repo.directory)):
                return  # a session in the directory was created meanwhile
            await asyncio.to_thread(_discard, repo.git_dir)
            repo.forget()

    async def sweep(self) -> None:
        """Remove the repositories no session's directory names, and half-removed ones (a
        kill between a deletion and its cleanup): run at start-up, and after a deletion."""
        live = await self.store.read(_live_names)
        stale = await asyncio.to_thread(_leftovers, self.repos.root, live)
        known = {repo.git_dir: repo for repo in self.repos.known()}
        for path in stale:
            repo = known.get(path)
            if repo is not None:
                await self._remove(repo)  # under its lock, once more checked unused
            else:
                await asyncio.to_thread(_discard, path)

    async def sessions_deleted(self) -> None:
        """After a deletion: the repositories no session uses go now; the others (a deleted
        session may have shared its directory) are tidied, keeping what remains."""
        await self.sweep()
        directories = await self.store.read(
            lambda c: {str(s["directory"]) for s in q.list_sessions(c)}
        )
        for directory in sorted(directories):
            if await asyncio.to_thread((self.repos.root / repo_name(directory) / "HEAD").exists):
                self.request(directory)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
