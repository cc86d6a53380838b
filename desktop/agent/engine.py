"""The session engine, built in one place: `build_engine` makes every part (permissions, the
PTY host link, background work, the session service, the tools, the runner) in dependency
order, each given its parts through its constructor."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from desktop.agent.permissions import Permissions
from desktop.agent.rules import RULES_FILE, RuleBook
from desktop.agent.runner import ProfileSource, RunnerOptions, SessionRunner
from desktop.agent.service import SessionService
from desktop.agent.subagent import SubagentTool
from desktop.checkpoints import Checkpoints
from desktop.config import Settings
from desktop.events.bus import DurableBus
from desktop.jobs.host import Connect, ShellJobs
from desktop.jobs.service import BackgroundWork
from desktop.tools.base import Tool
from desktop.tools.registry import default_tools
from desktop.tools.shell import ShellTool


@dataclass(frozen=True)
class EngineParts:
    """What the engine is built from: the service's (or a test's) own parts."""

    bus: DurableBus
    settings: Settings
    profile: ProfileSource  # read at every step: a settings change applies to the next one
    connect: Connect  # the PTY host, started on first use
    connect_running: Connect  # only a PTY host that already runs (housekeeping)
    options: RunnerOptions | None = None
    tools: Mapping[str, Tool] = field(default_factory=dict)  # beside the built-in ones


@dataclass(frozen=True)
class Engine:
    bus: DurableBus
    permissions: Permissions
    host: ShellJobs
    checkpoints: Checkpoints
    background: BackgroundWork
    sessions: SessionService
    runner: SessionRunner

    async def start(self) -> None:
        """Before any route serves: restart recovery (recovery.py's phases), then the job
        cleanup timer."""
        await self.background.recovery.recover()
        self.background.cleanup.start()

    async def close(self) -> None:
        """Before the PTY host link closes: a waiting shell call is cancelled (left to the
        successor) rather than failing on a closed connection; runs are cancelled unsettled."""
        await self.runner.close()
        await self.checkpoints.close()
        await self.background.close()


class _Later:
    """The runner's methods for the parts built before it: its own tools, background work
    and the session service start, wait for and interrupt turns, which only happens once
    it exists (each call reaches the runner when it is made)."""

    def __init__(self, get: Callable[[], SessionRunner]) -> None:
        self._get = get

    def __getattr__(self, name: str) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            return getattr(self._get(), name)(*args, **kwargs)

        return call


def build_engine(parts: EngineParts) -> Engine:
    bus, settings = parts.bus, parts.settings
    runner_later = cast(SessionRunner, _Later(lambda: runner))
    permissions = Permissions(bus, RuleBook(settings.data_dir / RULES_FILE))
    host = ShellJobs(parts.connect)
    checkpoints = Checkpoints(
        bus, settings.data_dir / "checkpoints", [settings.data_dir, settings.runtime_dir]
    )
    background = BackgroundWork(
        bus,
        runner_later,
        host,
        # Housekeeping never starts a PTY host (nor keeps one from exiting idle).
        cleanup_host=ShellJobs(parts.connect_running),
        retention=settings.job_retention_seconds,
    )
    sessions = SessionService(
        bus, runner_later, on_deleted=(background.sessions_deleted, checkpoints.sessions_deleted)
    )
    shell = ShellTool(host, background.shell_backgrounded, background.shell_foreground)
    subagent = SubagentTool(
        bus.store,
        sessions.create_child,
        sessions.task,
        runner_later.wait_idle,
        runner_later.interrupt,
        background.subagent_backgrounded,
        background.subagent_foreground,
    )
    tools: dict[str, Tool] = {
        **default_tools(),
        shell.name: shell,
        subagent.name: subagent,
        **parts.tools,
    }

    async def settled(session_id: str) -> None:
        await sessions.refresh_status(session_id)
        await checkpoints.settled(session_id)

    interrupted: tuple[Callable[[str], Awaitable[object]], ...] = (background.interrupted,)
    runner = SessionRunner(
        bus,
        profile=parts.profile,
        tools=tools,
        permissions=permissions,
        private_dirs=(settings.data_dir, settings.runtime_dir),
        jobs=host,
        options=parts.options,
        checkpoints=checkpoints,
        on_status=settled,
        on_interrupt=interrupted,
    )
    return Engine(bus, permissions, host, checkpoints, background, sessions, runner)
