"""The runner: each session's turn loop (claim, settle, deliver input, steps and their tools,
one terminal event) and the registry that owns every turn's task."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import aiohttp

from desktop.agent.compaction import CompactionFailed, Compactor
from desktop.agent.context import Accounting, Windows
from desktop.agent.fitting import COMPACTION_FAILED, Fitter, failure_text, summariser
from desktop.agent.instructions import project_instructions
from desktop.agent.permissions import Permissions
from desktop.agent.prompt import system_prompt
from desktop.agent.retries import Retries, SettingsChanges
from desktop.agent.session_model import session_model
from desktop.agent.settle import RESTART_NOTICE, JobFinder, settle
from desktop.agent.step import StepInput, model_of, run_step
from desktop.agent.subagent import offers_subagent
from desktop.agent.title import DEFAULT_TITLE, title_from_prompt
from desktop.agent.tools_exec import ToolRunner, TurnFlags
from desktop.checkpoints import Checkpoints, TurnTracker
from desktop.events import history
from desktop.events.bus import Draft, DurableBus, draft
from desktop.events.errors import INPUT_GONE, SessionError
from desktop.events.ids import new_id
from desktop.provider.client import ChatClient
from desktop.provider.errors import NOT_CONFIGURED, NOT_CONFIGURED_TEXT
from desktop.provider.models import model_window
from desktop.provider.profiles import Profile, ToolSpec
from desktop.store import log as eventlog
from desktop.store import sessions as q
from desktop.tools.base import Tool

_log = logging.getLogger("desk.session.runner")

MAX_STEPS = 200  # per turn: a model that calls tools forever is stopped
MAX_CUTS = 3  # continuations after a stream cut mid-output, per turn
MAX_STEPS_PROMPT = (
    "You have reached the step limit of this turn: tools are disabled now. Reply with text "
    "only: summarise where things stand, what was done, and what remains to be done next."
)
_COMPLETE = ("stop", "length", "content_filter", "end_turn")

ProfileSource = Callable[[], Awaitable[Profile | None]]
StatusHook = Callable[[str], Awaitable[None]]


@dataclass
class RunnerOptions:
    retry_scale: float = 1.0  # tests shrink the back-off (never a server's retry-after)
    read_timeout: float | None = None


class SessionRunner:
    def __init__(
        self,
        bus: DurableBus,
        *,
        profile: ProfileSource,
        tools: Mapping[str, Tool],
        permissions: Permissions,
        private_dirs: Sequence[Path] = (),
        jobs: JobFinder | None = None,
        options: RunnerOptions | None = None,
        on_status: StatusHook | None = None,
        on_interrupt: Sequence[Callable[[str], Awaitable[object]]] = (),
        fitter: Fitter | None = None,
        checkpoints: Checkpoints | None = None,
    ) -> None:
        self.bus = bus
        self.checkpoints = checkpoints  # the trees around each step that may write
        self.store = bus.store
        self.profile = profile
        self.permissions = permissions
        self.jobs = jobs
        self.options = options or RunnerOptions()
        # No tool ever reaches Desk's own dirs (the token, the provider key), whatever the
        # session's folder.
        self.tools = ToolRunner(bus, tools, permissions, private=tuple(private_dirs))
        self.on_status = on_status  # told when a turn's task starts or ends
        # Called with the session before a user interrupt cancels its turn (background
        # work: the session's own job, a background child, is cancelled for good).
        self.on_interrupt = tuple(on_interrupt)
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._flags: dict[str, TurnFlags] = {}
        # The step whose tools run now, with its turn's trees: an interrupt records what
        # the tools changed before they were stopped.
        self._running: dict[str, tuple[str, TurnTracker]] = {}
        self._woken: set[str] = set()
        self._aux: set[asyncio.Task[Any]] = set()
        self._closing = False
        self._http: aiohttp.ClientSession | None = None
        self.changes = SettingsChanges()
        self.fitter = fitter or Fitter(
            bus, Windows(bus.store, self._model_window), Accounting(), Compactor(bus)
        )

    # The Runner seam ---------------------------------------------------------------------
    def active(self) -> set[str]:
        return set(self._tasks)

    def wake(self, session_id: str) -> None:
        if self._closing:
            return
        if session_id in self._tasks:
            self._woken.add(session_id)
            return
        self._start(session_id, resume=False)

    def settings_changed(self) -> None:
        """The provider settings or a session's model changed: a retry waiting out its
        back-off re-reads them, and goes at once when they changed for its session."""
        self.changes.notify()

    async def interrupt(self, session_id: str) -> bool:
        """End the session's turn for good: True when one was running."""
        task = self._tasks.get(session_id)
        if task is None:
            return False
        self._flags[session_id].interrupted.set()
        self._woken.discard(session_id)
        for hook in self.on_interrupt:
            with contextlib.suppress(Exception):
                await hook(session_id)
        task.cancel()
        await asyncio.wait([task])
        return True

    # Lifecycle -----------------------------------------------------------------------------
    def resume(self, session_id: str) -> None:
        """Continue a turn a previous process left claimed (restart recovery)."""
        if session_id not in self._tasks and not self._closing:
            self._start(session_id, resume=True)

    async def wait_idle(self, session_id: str) -> None:
        while (task := self._tasks.get(session_id)) is not None:
            await asyncio.wait([task])

    async def close(self) -> None:
        """Service shutdown: cancel every task without interrupting (claims stay)."""
        self._closing = True
        tasks = [*self._tasks.values(), *self._aux]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
        if self._http is not None:
            await self._http.close()

    def _start(self, session_id: str, *, resume: bool) -> None:
        flags = TurnFlags()
        self._flags[session_id] = flags
        task = asyncio.get_running_loop().create_task(self._turn(session_id, flags, resume))
        self._tasks[session_id] = task

    def _session(self) -> aiohttp.ClientSession:
        if self._http is None or self._http.closed:
            self._http = aiohttp.ClientSession()
        return self._http

    async def _model_window(self, profile: Profile) -> int | None:
        return await model_window(self._session(), profile)

    def _client(self, profile: Profile) -> ChatClient:
        self._session()
        kw = (
            {} if self.options.read_timeout is None else {"read_timeout": self.options.read_timeout}
        )
        return ChatClient(profile, session=self._http, **kw)  # type: ignore[arg-type]

    async def _status(self, session_id: str) -> None:
        if self.on_status is not None:
            with contextlib.suppress(Exception):
                await self.on_status(session_id)

    # The turn --------------------------------------------------------------------------------
    async def _turn(self, session_id: str, flags: TurnFlags, resume: bool) -> None:
        try:
            await self._drive(session_id, flags, resume)
        except asyncio.CancelledError:
            if flags.interrupted.is_set():
                await asyncio.shield(self._interrupted(session_id))
        except Exception as exc:
            _log.exception("the turn of %s failed", session_id)
            await asyncio.shield(self._failed_turn(session_id, exc))
        finally:
            if self._tasks.get(session_id) is asyncio.current_task():
                del self._tasks[session_id]
                self._flags.pop(session_id, None)
                self._running.pop(session_id, None)
            await asyncio.shield(self._status(session_id))
            if session_id in self._woken and not self._closing:
                self._woken.discard(session_id)
                self._start(session_id, resume=False)

    async def _failed_turn(self, session_id: str, exc: Exception) -> None:
        """Any failure of a turn is a durable, visible step failure, on the open step's
        message (or a new one), and the claim is released with it."""
        reason = f"The turn failed unexpectedly: {exc.__class__.__name__}: {exc}"[:2000]
        reason = reason.encode("utf-8", "replace").decode("utf-8")
        try:
            store = self.bus.store
            snap = await store.read(lambda c: history.read(c, session_id))
            if snap is None:
                return
            last: dict[str, Any] = snap.messages[-1] if snap.messages else {}
            times = last.get("time")
            times = times if isinstance(times, dict) else {}
            open_step = last.get("type") == "assistant" and not times.get("completed")
            await self._fail(session_id, str(last["id"]) if open_step else None, "internal", reason)
        except Exception:
            _log.exception("could not record the failure of the turn of %s", session_id)
            with contextlib.suppress(Exception):
                await self.bus.store.read(lambda c: q.release(c, session_id))

    async def _interrupted(self, session_id: str) -> None:
        snap = await self.store.read(lambda c: history.read(c, session_id))
        if snap is None:
            return
        await settle(self.bus, session_id, snap.messages, None, cancelled=True)
        running = self._running.pop(session_id, None)
        mark = None if running is None else await running[1].after_tools()
        if running is not None and mark is not None:
            ended = {"message_id": running[0], "finish": "interrupted", "checkpoint": mark}
            await self.bus.publish(draft(session_id, "session.step.ended", ended))
        await self.bus.publish(
            draft(session_id, "session.execution.interrupted", {"reason": "user"})
        )

    async def _drive(self, session_id: str, flags: TurnFlags, resume: bool) -> None:
        found = await self.store.read(lambda c: q.claim(c, session_id, eventlog.now_ms()))
        if not found:
            return
        await self._status(session_id)
        need_step = False
        mid_turn = False
        steps = cuts = 0
        titled = False
        turn: TurnTracker | None = None
        while True:
            snap = await self.store.read(lambda c: history.read(c, session_id))
            if snap is None:
                return  # deleted meanwhile
            settled = await settle(self.bus, session_id, snap.messages, self.jobs)
            if settled.adopt:
                await self.tools.run(session_id, snap.directory, settled.adopt, flags)
                adopted: tuple[str, dict[str, Any]] = ("", {})
                if self.checkpoints is not None:  # what the adopted calls changed
                    adopted = await self.checkpoints.adopted_step(session_id, snap.directory)
                ended = [
                    draft(
                        session_id,
                        "session.step.ended",
                        {"message_id": m, "finish": "tool_calls"}
                        | ({"checkpoint": adopted[1]} if adopted[1] and m == adopted[0] else {}),
                    )
                    for m in dict.fromkeys(c.message_id for c in settled.adopt)
                ]
                await self.bus.publish(ended)
            if settled.lost:
                await self.bus.publish(
                    draft(
                        session_id,
                        "session.synthetic",
                        {
                            "message_id": new_id("msg"),
                            "text": RESTART_NOTICE,
                            "description": "restart",
                            "metadata": {"reason": "restart"},
                        },
                    )
                )
            if settled.adopt or settled.lost:
                need_step = True
                snap = await self.store.read(lambda c: history.read(c, session_id))
                if snap is None:
                    return
            elif resume and not steps:
                need_step = need_step or not _complete(snap.messages)
            self._woken.discard(session_id)
            rows = [r for r in snap.inbox if r["mode"] == "steer"] if mid_turn else snap.inbox
            if not rows and not need_step:
                if await self._end(session_id):
                    return
                mid_turn = False
                continue
            if steps >= MAX_STEPS:
                await self._fail(
                    session_id,
                    None,
                    "runner.max_steps",
                    f"The turn stopped after {MAX_STEPS} steps.",
                )
                return
            steps += 1
            try:
                outcome = await self._step(session_id, snap, rows, last=steps == MAX_STEPS)
            except SessionError as exc:
                if exc.type != INPUT_GONE:
                    raise
                steps -= 1  # a prompt was cancelled after this read: nothing was sent
                continue
            if outcome is None or outcome.failed:
                return
            if (
                not titled
                and outcome.text
                and snap.title == DEFAULT_TITLE
                and snap.parent_id is None
            ):
                titled = True
                self._title(session_id)
            if outcome.cut:
                cuts += 1
                end = {"message_id": outcome.message_id, "finish": "cut"}
                await self.bus.publish(draft(session_id, "session.step.ended", end))
                if cuts > MAX_CUTS:
                    await self._fail(
                        session_id,
                        None,
                        "provider.stream_cut",
                        "The provider cut the answer off repeatedly.",
                    )
                    return
                need_step, mid_turn = True, True
                continue
            mark = None
            if outcome.calls:
                await self.tools.announce(session_id, outcome.calls)
                if turn is None and self.checkpoints is not None:
                    turn = self.checkpoints.turn(session_id, snap.directory)
                if turn is not None:
                    await turn.before_tools(outcome.message_id)
                    self._running[session_id] = (outcome.message_id, turn)
                await self.tools.run(session_id, snap.directory, outcome.calls, flags)
                self._running.pop(session_id, None)
                mark = None if turn is None else await turn.after_tools()
            end_data: dict[str, Any] = {"message_id": outcome.message_id, "finish": outcome.finish}
            if mark is not None:
                end_data["checkpoint"] = mark
            if outcome.tokens:
                end_data["tokens"] = outcome.tokens
            if outcome.cost is not None:
                end_data["cost"] = outcome.cost
            if outcome.context:
                end_data["context"] = outcome.context
            if outcome.calls:
                await self.bus.publish(draft(session_id, "session.step.ended", end_data))
                need_step, mid_turn = True, True
                continue
            if await self._end(session_id, draft(session_id, "session.step.ended", end_data)):
                return
            need_step, mid_turn = False, False

    async def _end(self, session_id: str, last: Draft | None = None) -> bool:
        """Publish the turn's terminal event (releasing the claim) unless input waits;
        True when the turn is over."""
        released: list[bool] = []

        def release(conn: sqlite3.Connection) -> None:
            if not q.inbox_pending(conn, session_id):
                q.release(conn, session_id)
                released.append(True)

        if last is None:
            await self.store.read(release)
        else:
            await self.bus.publish(last, commit=release)
        return bool(released)

    async def _fail(
        self,
        session_id: str,
        message_id: str | None,
        kind: str,
        text: str,
        start: list[Draft] | None = None,
    ) -> None:
        mid = message_id or new_id("msg")
        drafts = list(start or [])
        if message_id is None:
            drafts.append(
                draft(
                    session_id,
                    "session.step.started",
                    {"message_id": mid, "agent": "build", "model": {"id": "", "provider_id": ""}},
                )
            )
        drafts.append(
            draft(
                session_id,
                "session.step.failed",
                {"message_id": mid, "error": {"type": kind, "message": text}},
            )
        )
        await self.bus.publish(drafts, commit=lambda c: q.release(c, session_id))

    async def _step(
        self,
        session_id: str,
        snap: history.Snapshot,
        rows: list[dict[str, Any]],
        *,
        last: bool = False,
    ) -> Any:
        ids = [r["id"] for r in rows]
        deliveries = [draft(session_id, "session.input.delivered", {"message_id": i}) for i in ids]
        delivered = [snap.waiting[i] for i in ids if i in snap.waiting]
        profile = await self._profile(session_id)
        if profile is None:
            await self._fail(session_id, None, NOT_CONFIGURED, NOT_CONFIGURED_TEXT, deliveries)
            return None
        specs = await self._specs(session_id)
        instructions = await project_instructions(snap.directory)
        system = system_prompt(snap.directory, specs, instructions)
        every = [ToolSpec(s["name"], s["description"], s["parameters"]) for s in specs]
        tools = [] if last else every
        client = self._client(profile)
        retries = self._retries(session_id)
        try:
            prepared = await self.fitter.prepare(
                session_id,
                profile,
                summariser(client, retries),
                snap.messages,
                delivered,
                system,
                tools,
            )
        except CompactionFailed as exc:
            await self._fail(session_id, None, COMPACTION_FAILED, failure_text(exc), deliveries)
            return None
        mid = new_id("msg")
        step = StepInput(
            session_id=session_id,
            message_id=mid,
            history=_closing(prepared.view) if last else prepared.view,
            system=system,
            tools=tools,
            model=model_of(profile),
            start=deliveries,
            start_commit=(lambda c: q.inbox_take(c, ids)) if ids else None,
            release=lambda c: q.release(c, session_id),
            refused=set(),
        )
        outcome = await run_step(self.bus, client, step, retries)
        if outcome.overflow is not None:
            # Held back: compact and send once more, smaller (with the settings it was
            # refused under: a retry may have changed them).
            client = outcome.client
            profile = client.profile
            try:
                summarise = summariser(client, retries)
                prepared = await self.fitter.recover(
                    session_id, profile, summarise, outcome.overflow, prepared, mid, system, tools
                )
            except CompactionFailed as exc:
                await self._fail(session_id, mid, COMPACTION_FAILED, failure_text(exc))
                return None
            step.history = _closing(prepared.view) if last else prepared.view
            step.start, step.start_commit = [], None
            outcome = await run_step(self.bus, client, step, retries)
            if outcome.overflow is not None:
                reason = "the provider refused the compacted request as too long as well"
                await self._fail(
                    session_id, mid, COMPACTION_FAILED, failure_text(CompactionFailed(reason))
                )
                return None
        if not outcome.failed and not outcome.cut:
            profile = outcome.client.profile
            outcome.context = self.fitter.observe(session_id, profile, prepared, outcome.tokens)
        return outcome

    async def compact_now(self, session_id: str) -> bool:
        """Compact the session's history now (the person asked); False when a turn runs.
        Raises CompactionFailed, or LookupError without a provider."""
        if session_id in self._tasks or self._closing:
            return False
        profile = await self._profile(session_id)
        if profile is None:
            raise LookupError("No model provider is configured.")
        task = asyncio.get_running_loop().create_task(self._compact(session_id, profile))
        self._tasks[session_id] = task  # busy meanwhile: a prompt waits for it
        self._flags[session_id] = TurnFlags()
        try:
            await asyncio.wait([task])
        finally:
            if self._tasks.get(session_id) is task:
                del self._tasks[session_id]
                self._flags.pop(session_id, None)
            await self._status(session_id)
            if session_id in self._woken and not self._closing:
                self._woken.discard(session_id)
                self._start(session_id, resume=False)
        task.result()
        return True

    async def _compact(self, session_id: str, profile: Profile) -> None:
        snap = await self.store.read(lambda c: history.read(c, session_id))
        if snap is None:
            raise LookupError("No such session.")
        specs = await self._specs(session_id)
        instructions = await project_instructions(snap.directory)
        system = system_prompt(snap.directory, specs, instructions)
        tools = [ToolSpec(s["name"], s["description"], s["parameters"]) for s in specs]
        summarise = summariser(self._client(profile), self._retries(session_id))
        await self.fitter.manual(session_id, profile, summarise, system, tools)

    async def _profile(self, session_id: str) -> Profile | None:
        """The provider's profile (read now: a settings change applies to the next step)
        with the session's own model, effort and window (or its parent's)."""
        profile = await self.profile()
        if profile is None:
            return None
        chosen = await self.store.read(lambda c: session_model(c, session_id))
        return chosen.apply(profile)

    def _retries(self, session_id: str) -> Retries:
        current = partial(self._current, session_id)
        return Retries(self.bus, session_id, current, self.changes, self.options.retry_scale)

    async def _current(self, session_id: str) -> ChatClient | None:
        """The client for the session's settings now (a retry re-reads them)."""
        profile = await self._profile(session_id)
        return None if profile is None else self._client(profile)

    async def _specs(self, session_id: str) -> list[dict[str, Any]]:
        """The tools offered to the session: `subagent` only above the nesting limit."""
        specs = self.tools.specs()
        if await self.store.read(lambda c: offers_subagent(c, session_id)):
            return specs
        return [s for s in specs if s["name"] != "subagent"]

    def _title(self, session_id: str) -> None:
        task = asyncio.get_running_loop().create_task(self._set_title(session_id))
        self._aux.add(task)
        task.add_done_callback(self._aux.discard)

    async def _set_title(self, session_id: str) -> None:
        def first_prompt(conn: sqlite3.Connection) -> str:
            for m in q.all_messages(conn, session_id):
                if m.get("type") == "user":
                    return str(m.get("text", ""))
            return ""

        title = title_from_prompt(await self.store.read(first_prompt))
        if title is None:
            return

        def still_default(conn: sqlite3.Connection) -> None:
            found = q.get_session(conn, session_id)
            if found is None or found["title"] != DEFAULT_TITLE:
                raise _Keep()

        with contextlib.suppress(_Keep):
            await self.bus.publish(
                draft(session_id, "session.updated", {"title": title}), guard=still_default
            )


class _Keep(Exception):
    """The title changed meanwhile: keep the person's."""


def _closing(view: list[Any]) -> list[Any]:
    """The last step's history: the request for a closing summary at its end."""
    return [*view, {"type": "synthetic", "text": MAX_STEPS_PROMPT}]


def _complete(messages: list[dict[str, Any]]) -> bool:
    """The history ends with a finished answer: a resumed turn has nothing left to do."""
    if not messages:
        return True
    last = messages[-1]
    if last.get("type") != "assistant":
        return False
    has_tools = any(p.get("type") == "tool" for p in last.get("content", []))
    return not has_tools and last.get("finish") in _COMPLETE
