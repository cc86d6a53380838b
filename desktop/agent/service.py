"""The session service: what the API asks of sessions, each change a durable event whose
rule is checked inside its own transaction, and the one announcer of a session's status
(the store's: busy while its turn's claim is held).
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from desktop.agent.compaction import CompactionFailed
from desktop.agent.context import session_context
from desktop.agent.permissions import mode_of
from desktop.agent.title import DEFAULT_TITLE
from desktop.checkpoints import forked_from
from desktop.events import errors
from desktop.events.bus import Draft, DurableBus, draft
from desktop.events.ids import new_id
from desktop.events.schema import TOOL_STATUS, validate_content
from desktop.jobs.recovery import Turns
from desktop.store import log
from desktop.store import sessions as q
from desktop.store.log import Event

MAX_PAGE = 200
DEFAULT_PAGE = 50
MAX_LOG_PAGE = 5000


class Runner(Turns, Protocol):
    """What the service needs of the runner (desktop.agent.runner.SessionRunner): its turn
    controls. `wake` is called after a prompt was durably recorded (with the session's
    claim); the runner drains the session's inbox and releases the claim when done."""

    async def compact_now(self, session_id: str) -> bool:
        """Compact the session's history now; False while a turn runs."""
        ...

    def settings_changed(self) -> None:
        """A session's model settings changed: a waiting retry re-reads them."""
        ...


@dataclass(frozen=True)
class Page:
    messages: list[dict[str, Any]]
    previous: str | None
    next: str | None
    seq: int  # the session's last event seq when the page was read (same snapshot)


def _cursor(value: int | None) -> str | None:
    return None if value is None else str(value)


class SessionService:
    def __init__(
        self,
        bus: DurableBus,
        runner: Runner,
        *,
        on_deleted: Sequence[Callable[[Sequence[str]], Awaitable[None]]] = (),
    ) -> None:
        self.bus = bus
        self.store = bus.store
        self.runner = runner
        # Told the deleted tree (the session and its descendants) once the deletion is
        # durable: what lives outside the database (job terminals) goes with it.
        self.on_deleted = tuple(on_deleted)
        self._status: dict[str, object] = {}
        bus.listeners.append(self._announce_status)

    def _session_json(self, conn: sqlite3.Connection, session_id: str) -> dict[str, object]:
        found = q.get_session(conn, session_id)
        if found is None:
            raise errors.session_not_found(session_id)
        found["permission_mode"] = mode_of(conn, session_id)
        found.update(session_context(conn, session_id))
        origin = forked_from(conn, session_id)
        if origin is not None:
            found["forked_from"] = origin
        return found

    def _require(self, session_id: str) -> Callable[[sqlite3.Connection], None]:
        def guard(conn: sqlite3.Connection) -> None:
            self._session_json(conn, session_id)

        return guard

    # Sessions ----------------------------------------------------------------------
    async def create(
        self, *, title: str | None, directory: str | None, parent_id: str | None
    ) -> dict[str, object]:
        folder = directory if directory is not None else os.getcwd()
        if not await asyncio.to_thread(os.path.isdir, folder):
            raise errors.invalid(f"directory {folder!r} is not an existing folder.")
        folder = await asyncio.to_thread(os.path.realpath, folder)
        session_id = new_id("ses")
        data: dict[str, object] = {"title": title or DEFAULT_TITLE, "directory": folder}
        if parent_id is not None:
            data["parent_id"] = parent_id
        await self.bus.publish(draft(session_id, "session.created", data))
        return await self.get(session_id)

    async def create_child(self, parent: str, title: str, directory: str) -> str:
        """A subagent's session under `parent`; its id."""
        child = await self.create(title=title, directory=directory, parent_id=parent)
        return str(child["id"])

    async def get(self, session_id: str) -> dict[str, object]:
        return await self.store.read(lambda c: self._session_json(c, session_id))

    async def list_sessions(self) -> list[dict[str, object]]:
        def read(conn: sqlite3.Connection) -> list[dict[str, object]]:
            rows = q.list_sessions(conn)
            for row in rows:
                row["permission_mode"] = mode_of(conn, str(row["id"]))
                row.update(session_context(conn, str(row["id"])))
            return rows

        return await self.store.read(read)

    async def rename(self, session_id: str, title: str) -> dict[str, object]:
        await self.bus.publish(
            draft(session_id, "session.updated", {"title": title}), guard=self._require(session_id)
        )
        return await self.get(session_id)

    async def set_window(self, session_id: str, window: int | None) -> dict[str, object]:
        """The session's own context window (None: the model's)."""
        await self.bus.publish(
            draft(session_id, "session.context.window", {"window": window}),
            guard=self._require(session_id),
        )
        self.runner.settings_changed()
        return await self.get(session_id)

    async def set_model(self, session_id: str, settings: dict[str, object]) -> dict[str, object]:
        """The session's own model and/or reasoning effort (None: back to the provider's)."""
        await self.bus.publish(
            draft(session_id, "session.model", settings), guard=self._require(session_id)
        )
        self.runner.settings_changed()
        return await self.get(session_id)

    async def compact(self, session_id: str) -> dict[str, object]:
        """Compact now (the person's "Compact now"): 409 while a turn runs, 422 when the
        history cannot be compacted; the session afterwards."""
        await self.get(session_id)
        try:
            done = await self.runner.compact_now(session_id)
        except CompactionFailed as exc:
            failed = errors.SessionError(
                422, "context.compaction_failed", f"Nothing was compacted: {exc}."
            )
            # Every window: a retry banner of its summary request waits for nothing now.
            error = {"type": failed.type, "message": failed.message}
            self.bus.broadcast(session_id, "session.compaction.failed", {"error": error})
            raise failed from None
        except LookupError as exc:
            raise errors.SessionError(409, "provider.not_configured", str(exc)) from None
        if not done:
            raise errors.busy(session_id)
        return await self.get(session_id)

    async def delete(self, session_id: str) -> None:
        """Deletes the session, its descendants and all they own; a turn running in any of
        them is interrupted first."""
        await self.get(session_id)
        tree: list[str] = await self.store.read(lambda c: q.descendants(c, session_id))
        for sid in tree:
            await self.runner.interrupt(sid)  # False where no turn runs
        await self.bus.publish(
            draft(session_id, "session.deleted", {}), guard=self._require(session_id)
        )
        for hook in self.on_deleted:
            await hook(tree)

    # Messages ----------------------------------------------------------------------
    async def messages(
        self,
        session_id: str,
        *,
        limit: int = DEFAULT_PAGE,
        before: int | None = None,
        after: int | None = None,
    ) -> Page:
        def read(conn: sqlite3.Connection) -> Page:
            self._session_json(conn, session_id)
            rows, older, newer = q.messages_page(conn, session_id, limit, before, after)
            # A prompt still waiting for delivery says so (a reloaded page can cancel it).
            waiting = {row["id"] for row in q.inbox_pending(conn, session_id)}
            for row in rows:
                if row["type"] == "user" and row["id"] in waiting:
                    row["queued"] = True
            return Page(rows, _cursor(older), _cursor(newer), log.last_seq(conn, session_id))

        return await self.store.read(read)

    async def message(self, session_id: str, message_id: str) -> dict[str, Any]:
        return (await self.message_at(session_id, message_id))[0]

    async def message_at(self, session_id: str, message_id: str) -> tuple[dict[str, Any], int]:
        """One message and the session's last event seq, read in one snapshot."""

        def read(conn: sqlite3.Connection) -> tuple[dict[str, Any], int]:
            self._session_json(conn, session_id)
            found = q.message(conn, message_id)
            if found is None or found[0] != session_id:
                raise errors.message_not_found(session_id, message_id)
            return found[1], log.last_seq(conn, session_id)

        return await self.store.read(read)

    def _check_update(self, conn: sqlite3.Connection, session_id: str, message_id: str) -> None:
        # In this order: session, busy, message, kind, completion.
        found = self._session_json(conn, session_id)
        if found["status"] == "busy":
            raise errors.busy(session_id)
        stored = q.message(conn, message_id)
        if stored is None or stored[0] != session_id:
            raise errors.message_not_found(session_id, message_id)
        current = stored[1]
        if current["type"] != "assistant":
            raise errors.message_not_assistant(message_id)
        if "completed" not in current["time"]:
            raise errors.message_incomplete(message_id)

    async def update_message(
        self, session_id: str, message_id: str, content: object
    ) -> tuple[dict[str, Any], int]:
        """Replaces a completed assistant message's content through
        `session.message.content.updated`; returns the updated message and the session's
        seq it was read at."""
        parts = validate_content(content)
        unfinished = any(
            p["type"] == "tool" and p["state"]["status"] in TOOL_STATUS[:2] for p in parts
        )

        def guard(conn: sqlite3.Connection) -> None:
            self._check_update(conn, session_id, message_id)
            if unfinished:
                raise errors.message_tool_incomplete(message_id)

        await self.bus.publish(
            draft(
                session_id,
                "session.message.content.updated",
                {"message_id": message_id, "content": parts},
            ),
            guard=guard,
        )
        return await self.message_at(session_id, message_id)

    async def log(
        self, session_id: str, *, after: int = 0, limit: int = MAX_LOG_PAGE
    ) -> list[Event]:
        def read(conn: sqlite3.Connection) -> list[Event]:
            self._session_json(conn, session_id)
            return log.session_log(conn, session_id, after, limit)

        return await self.store.read(read)

    async def head(self) -> int:
        """The highest event position ever assigned."""
        return await self.store.read(log.head)

    async def events_after(self, position: int, limit: int) -> list[Event]:
        return await self.store.read(lambda c: log.after(c, position, limit))

    # Input ---------------------------------------------------------------------------
    async def prompt(
        self, session_id: str, text: str, mode: str = "queue", *, from_session: str | None = None
    ) -> str:
        """Records the prompt (user message, inbox row and the session's claim: busy from
        now, and a turn owed even across a crash; one transaction) and wakes the runner;
        returns the message id. `from_session`: the parent whose agent wrote it."""
        if not text.strip():
            raise errors.invalid("text must not be empty.")
        message_id = new_id("msg")
        created = log.now_ms()
        data: dict[str, object] = {"message_id": message_id, "text": text, "mode": mode}
        if from_session is not None:
            data["from_session"] = from_session
        event = draft(session_id, "session.prompted", data, created=created)

        def commit(conn: sqlite3.Connection) -> None:
            q.inbox_add(
                conn,
                inbox_id=message_id,
                session_id=session_id,
                mode=mode,
                kind="user",
                data={"text": text},
                created=created,
            )
            q.claim(conn, session_id, created)

        await self.bus.publish(event, guard=self._require(session_id), commit=commit)
        self.runner.wake(session_id)
        return message_id

    async def task(self, session_id: str, text: str, parent: str) -> str:
        """A subagent's task: the prompt the parent session's agent wrote for its child."""
        return await self.prompt(session_id, text, from_session=parent)

    async def cancel_prompt(self, session_id: str, message_id: str) -> None:
        """Withdraws a prompt that has not reached the model yet: `session.input.cancelled`
        and the removal of its inbox row in one transaction, which the runner's delivery
        (it takes the row in its own) cannot interleave with: one of the two wins. 409
        `session.prompt_delivered` when the delivery won."""

        def guard(conn: sqlite3.Connection) -> None:
            self._session_json(conn, session_id)
            stored = q.message(conn, message_id)
            if stored is None or stored[0] != session_id:
                raise errors.message_not_found(session_id, message_id)
            if stored[1]["type"] != "user":
                raise errors.SessionError(
                    400,
                    "session.message_not_user",
                    f"Message {message_id!r} is not a prompt; only prompts can be cancelled.",
                )
            if not any(row["id"] == message_id for row in q.inbox_pending(conn, session_id)):
                raise errors.prompt_not_queued(message_id)

        def commit(conn: sqlite3.Connection) -> None:
            q.inbox_take(conn, [message_id])

        await self.bus.publish(
            draft(session_id, "session.input.cancelled", {"message_id": message_id}),
            guard=guard,
            commit=commit,
        )

    async def publish(self, drafts: list[Draft]) -> list[Event]:
        """Publish already validated drafts (the engine's own events, the test hook)."""
        return await self.bus.publish(drafts)

    # The claim (the runner's) ----------------------------------------------------------
    async def set_claim(self, session_id: str, claimed: bool) -> dict[str, object]:
        def write(conn: sqlite3.Connection) -> dict[str, object]:
            self._session_json(conn, session_id)
            if claimed:
                q.claim(conn, session_id, log.now_ms())
            else:
                q.release(conn, session_id)
            return self._session_json(conn, session_id)

        session: dict[str, object] = await self.store.read(write)
        self._emit_status(session_id, session["status"])
        return session

    async def refresh_status(self, session_id: str) -> None:
        """Announce the session's stored status (the runner calls it when a turn's task
        starts or ends: its claim may have changed without an event)."""
        found = await self.store.read(lambda c: q.get_session(c, session_id))
        if found is None:
            self._status.pop(session_id, None)
            return
        self._emit_status(session_id, found["status"])

    # Status announcements ------------------------------------------------------------
    def _emit_status(self, session_id: str, status: object) -> None:
        if self._status.get(session_id) == status:
            return
        self._status[session_id] = status
        self.bus.fanout.publish(
            "session.status", {"session_id": session_id, "data": {"status": status}}
        )

    def _announce_status(self, events: list[Event], statuses: dict[str, str | None]) -> None:
        for sid, status in statuses.items():
            if status is None:
                self._status.pop(sid, None)
            else:
                self._emit_status(sid, status)
