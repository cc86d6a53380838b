"""`Checkpoints`: the session engine's side of checkpoints. The runner asks it for the trees
around each step that may write; the routes for a session's changes, and to revert, unrevert
and fork.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import desktop.checkpoints.history as history
import desktop.checkpoints.housekeeping as housekeeping
from desktop.checkpoints.diff import FileChange, changed, with_patches
from desktop.checkpoints.git import GitError
from desktop.checkpoints.history import Step
from desktop.checkpoints.housekeeping import Housekeeper, Retention
from desktop.checkpoints.revert import conflicts, write
from desktop.checkpoints.shadow import ShadowRepo, ShadowRepos
from desktop.checkpoints.snapshot import TooLarge, ignored, snapshot
from desktop.events import errors
from desktop.events.bus import DurableBus, draft
from desktop.events.errors import SessionError
from desktop.events.ids import new_id
from desktop.events.projector import checkpoint_key
from desktop.store import log as eventlog
from desktop.store import sessions as q

_log = logging.getLogger("desk.checkpoints")

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's id of the tree with nothing
MAX_LISTED = 500  # files a step's record lists (the rest are counted): the page's summary
FORK_TITLE = "Fork of {title}"


@dataclass(frozen=True)
class _Session:
    id: str
    directory: str
    title: str
    busy: bool
    messages: list[dict[str, Any]]
    pending: list[dict[str, Any]]


class TurnTracker:
    """One turn's trees: the one before its first step that may write, then each step's
    end (the next step's start). The running step's start is also kept in kv
    (`checkpoint.step/<session>`), so a successor that adopts the step's calls after a kill
    can record what they changed."""

    def __init__(self, checkpoints: Checkpoints, session_id: str, directory: str) -> None:
        self._checkpoints = checkpoints
        self._session_id = session_id
        self._directory = directory
        self._tree: str | None = None

    async def before_tools(self, message_id: str) -> None:
        if self._tree is None:
            self._tree = await self._checkpoints.capture(self._directory)
        if self._tree is not None:
            step = {"message_id": message_id, "start": self._tree}
            await self._checkpoints.remember_step(self._session_id, step)

    async def after_tools(self) -> dict[str, Any] | None:
        """The step's record for `session.step.ended` (None: it changed nothing)."""
        start = self._tree
        end = await self._checkpoints.capture(self._directory)
        self._tree = end
        await self._checkpoints.remember_step(self._session_id, None)
        if start is None or end is None or start == end:
            return None
        return await self._checkpoints.record(self._directory, start, end)


class Checkpoints:
    def __init__(
        self,
        bus: DurableBus,
        root: Path,
        private: Sequence[Path] = (),
        retention: Retention | None = None,
    ) -> None:
        """`root` holds the shadow repositories; `private` names Desk's own folders, never
        snapshotted even inside a session directory; `retention` defaults to
        `housekeeping.RETENTION`."""
        self.bus = bus
        self.store = bus.store
        self.repos = ShadowRepos(root, private)
        self.retention = retention or housekeeping.RETENTION
        self.housekeeper = Housekeeper(self.store, self.repos, self.retention)

    # The runner's side ------------------------------------------------------------------
    def turn(self, session_id: str, directory: str) -> TurnTracker:
        return TurnTracker(self, session_id, directory)

    async def remember_step(self, session_id: str, step: dict[str, str] | None) -> None:
        key = checkpoint_key("step", session_id)

        def write(conn: sqlite3.Connection) -> None:
            if step is None:
                q.kv_delete(conn, key)
            else:
                q.kv_set(conn, key, step, eventlog.now_ms())

        await self.store.run(lambda: write(self.store.connection()))

    async def adopted_step(self, session_id: str, directory: str) -> tuple[str, dict[str, Any]]:
        """After a restart, once the adopted calls of a step a killed process ran have
        ended: (its message id, its record) from the start kept in kv ("" and {}: none)."""
        key = checkpoint_key("step", session_id)
        step = await self.store.run(lambda: q.kv_get(self.store.connection(), key))
        if not isinstance(step, dict):
            return "", {}
        end = await self.capture(directory)
        await self.remember_step(session_id, None)
        start = str(step["start"])
        mark = None if end is None or end == start else await self.record(directory, start, end)
        return str(step["message_id"]), mark or {}

    async def capture(self, directory: str) -> str | None:
        """A snapshot of the directory now; None when it cannot be taken (logged: a turn
        never fails for its checkpoint)."""
        repo = self.repos.of(directory)
        if repo.off:
            return None
        try:
            async with repo.lock:
                return await snapshot(repo)
        except TooLarge as exc:
            repo.off = True
            _log.warning("checkpoints are off for a directory too large to record: %s", exc)
        except Exception:
            _log.exception("no snapshot of %s", directory)
        return None

    async def record(self, directory: str, start: str, end: str) -> dict[str, Any] | None:
        try:
            files = await changed(self.repos.of(directory), start, end)
        except Exception:
            _log.exception("no diff of %s", directory)
            return None
        if not files:
            return None
        out: dict[str, Any] = {
            "start": start,
            "end": end,
            "files": [f.to_json(patch=False) for f in files[:MAX_LISTED]],
        }
        if len(files) > MAX_LISTED:
            out["omitted"] = len(files) - MAX_LISTED
        return out

    # Housekeeping -------------------------------------------------------------------------
    async def settled(self, session_id: str) -> None:
        """A turn's task started or ended: once the session is idle, its directory's
        repository is tidied (at most once per `Retention.interval`)."""
        found = await self.store.read(lambda c: q.get_session(c, session_id))
        if found is not None and found["status"] != "busy":
            self.housekeeper.request(str(found["directory"]))

    async def sessions_deleted(self, tree: Sequence[str]) -> None:
        """Deleted sessions: a repository no session uses any more is removed now."""
        await self.housekeeper.sessions_deleted()

    async def close(self) -> None:
        await self.housekeeper.close()

    # Reads --------------------------------------------------------------------------------
    async def _session(self, session_id: str) -> _Session:
        def read(conn: sqlite3.Connection) -> _Session:
            found = q.get_session(conn, session_id)
            if found is None:
                raise errors.session_not_found(session_id)
            pending = q.kv_get(conn, checkpoint_key("pending", session_id))
            return _Session(
                session_id,
                str(found["directory"]),
                str(found["title"]),
                found["status"] == "busy",
                q.all_messages(conn, session_id),
                list(pending) if isinstance(pending, list) else [],
            )

        return await self.store.run(lambda: read(self.store.connection()))

    @staticmethod
    def _index(session_id: str, s: _Session, message_id: str) -> int:
        index = history.index_of(s.messages, message_id)
        if index is None:
            raise errors.message_not_found(session_id, message_id)
        return index

    async def _paths(self, repo: ShadowRepo, steps: Sequence[Step]) -> dict[Step, list[str]]:
        return {s: [f.path for f in await changed(repo, s.start, s.end)] for s in steps}

    async def changes(self, session_id: str, message_id: str | None) -> list[dict[str, object]]:
        """The files the turn answering `message_id` changed (None: the whole session)."""
        s = await self._session(session_id)
        turns = self.retention.turns
        if message_id is None:
            steps = history.live_steps(s.messages, history.kept_from(s.messages, turns))
        else:
            index = self._index(session_id, s, message_id)
            if index < history.kept_from(s.messages, turns):
                raise _expired(turns)
            steps = history.turn_steps(s.messages, index)
        if not steps:
            return []
        repo = self.repos.of(s.directory)
        with _unavailable(s.directory):
            spans = history.file_spans(steps, await self._paths(repo, steps))
            grouped: dict[tuple[str, str], list[str]] = {}
            for path, span in spans.items():
                grouped.setdefault((span.start, span.end), []).append(path)
            out: list[FileChange] = []
            for (start, end), paths in grouped.items():
                files = await changed(repo, start, end, paths)
                out.extend(await with_patches(repo, start, end, files))
        return [f.to_json() for f in sorted(out, key=lambda f: f.path)]

    # Revert and unrevert ------------------------------------------------------------------
    async def revert(
        self, session_id: str, message_id: str, *, force: bool = False, preview: bool = False
    ) -> dict[str, object]:
        s = await self._session(session_id)
        index = self._index(session_id, s, message_id)
        if s.messages[index].get("type") != "user":
            raise errors.message_not_user(message_id)
        if s.busy:
            raise errors.busy(session_id)
        if history.expired(s.messages, index, self.retention.turns):
            raise _expired(self.retention.turns)
        repo = self.repos.of(s.directory)
        with _unavailable(s.directory):
            return await self._revert(repo, s, index, message_id, force, preview)

    async def _revert(
        self, repo: ShadowRepo, s: _Session, index: int, message_id: str, force: bool, preview: bool
    ) -> dict[str, object]:
        async with repo.lock:
            steps = history.live_steps(s.messages, index)
            spans = history.file_spans(steps, await self._paths(repo, steps))
            expected = {path: span.end for path, span in spans.items()}
            for revert in s.pending:  # files a pending revert wrote: as it left them
                expected.update(dict.fromkeys(revert["restored"], revert["after"]))
            current = await _current(repo)
            clashing = await conflicts(repo, current, expected)
            targets = {
                path: span.start for path, span in spans.items() if force or path not in clashing
            }
            result: dict[str, object] = {
                "restored": sorted(targets),
                "conflicts": [] if force else clashing,
                "ignored": await ignored(repo),
            }
            if preview:
                return result
            data = {
                "message_id": message_id,
                "before": current,
                "restored": result["restored"],
                "conflicts": result["conflicts"],
            }
            await self._carry_out(repo, s.id, "session.reverted", data, targets)
        return result

    async def unrevert(self, session_id: str) -> dict[str, object]:
        s = await self._session(session_id)
        if s.busy:
            raise errors.busy(session_id)
        if not s.pending:
            raise errors.nothing_to_unrevert(session_id)
        repo = self.repos.of(s.directory)
        with _unavailable(s.directory):
            return await self._unrevert(repo, s)

    async def _unrevert(self, repo: ShadowRepo, s: _Session) -> dict[str, object]:
        async with repo.lock:
            targets: dict[str, str] = {}
            expected: dict[str, str] = {}
            for revert in s.pending:
                for path in revert["restored"]:
                    targets.setdefault(path, revert["before"])  # before the first of them
                    expected[path] = revert["after"]
            current = await _current(repo)
            clashing = await conflicts(repo, current, expected)
            targets = {p: t for p, t in targets.items() if p not in clashing}
            data = {"before": current, "restored": sorted(targets), "conflicts": clashing}
            await self._carry_out(repo, s.id, "session.unreverted", data, targets)
        return {"restored": data["restored"], "conflicts": clashing}

    async def _carry_out(
        self,
        repo: ShadowRepo,
        session_id: str,
        kind: str,
        data: dict[str, Any],
        targets: dict[str, str],
    ) -> None:
        """Intent, files, then the event with the intent's removal (with `repo.lock`)."""
        intent = {"kind": kind, "directory": repo.directory, "data": data, "targets": targets}
        key = checkpoint_key("intent", session_id)

        def remember(conn: sqlite3.Connection) -> None:
            with self.store.db.atomic():
                q.kv_set(conn, key, intent, eventlog.now_ms())

        await self.store.run(lambda: remember(self.store.connection()))
        await self._finish(repo, session_id, intent)

    async def _finish(self, repo: ShadowRepo, session_id: str, intent: dict[str, Any]) -> None:
        key = checkpoint_key("intent", session_id)
        await write(repo, intent["targets"])
        data = {**intent["data"], "after": await _current(repo)}

        def done(conn: sqlite3.Connection) -> None:
            q.kv_delete(conn, key)

        try:
            await self.bus.publish(draft(session_id, intent["kind"], data), commit=done)
        except SessionError:
            # The session went meanwhile: nothing describes the files any more.
            await self.store.run(lambda: q.kv_delete(self.store.connection(), key))
            raise

    async def recover(self) -> None:
        """Finish the reverts and unreverts a killed process left half done, and remove the
        repositories no session uses (at start-up, before any route serves)."""
        prefix = checkpoint_key("intent", "")
        found = await self.store.run(lambda: q.kv_prefix(self.store.connection(), prefix))
        for key, intent in found.items():
            assert isinstance(intent, dict)
            session_id = key[len(prefix) :]
            repo = self.repos.of(str(intent["directory"]))
            try:
                async with repo.lock:
                    await self._finish(repo, session_id, intent)
            except Exception:
                _log.exception("the half-done %s of %s could not be finished", key, session_id)
        await self.housekeeper.sweep()  # the repositories of sessions deleted before a kill

    # Fork -----------------------------------------------------------------------------------
    async def fork(self, session_id: str, message_id: str | None) -> str:
        """A new session in the same directory whose history is this one's up to and
        including `message_id` (default: all), reverted messages left out."""
        s = await self._session(session_id)
        end = len(s.messages) if message_id is None else self._index(session_id, s, message_id)
        if message_id is not None:
            end += 1
        if s.busy:
            raise errors.busy(session_id)
        new = new_id("ses")
        drafts = [
            draft(
                new,
                "session.created",
                {"title": FORK_TITLE.format(title=s.title)[:500], "directory": s.directory},
            ),
            draft(new, "session.forked", {"session_id": session_id, "message_id": message_id}),
        ]
        for message in s.messages[:end]:
            if message.get("reverted"):
                continue
            copy = {**message, "id": new_id("msg")}
            drafts.append(draft(new, "session.message.copied", {"message": copy}))
        await self.bus.publish(drafts)
        return new


@contextlib.contextmanager
def _unavailable(directory: str) -> Iterator[None]:
    """git failing, or the directory gone: a 409 that names it (a revert cut short by it
    is finished at the next start, from its intent)."""
    try:
        yield
    except (GitError, OSError) as exc:
        raise SessionError(
            409, "checkpoint.unavailable", f"The checkpoints of {directory!r} failed: {exc}"
        ) from exc


def _expired(turns: int) -> SessionError:
    return SessionError(
        409,
        "checkpoint.expired",
        f"Checkpoints are kept for the last {turns} turns of a session: this one is older.",
    )


async def _current(repo: ShadowRepo) -> str:
    """The directory's snapshot now; in a directory too large to record (which then has no
    step records either, so nothing to write) the empty tree."""
    if not repo.off:
        try:
            return await snapshot(repo)
        except TooLarge:
            repo.off = True
    return EMPTY_TREE


def forked_from(conn: sqlite3.Connection, session_id: str) -> dict[str, object] | None:
    found = q.kv_get(conn, checkpoint_key("forked_from", session_id))
    return found if isinstance(found, dict) else None
