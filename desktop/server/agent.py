"""The agent's wiring into the service: provider configuration, tools, PTY host jobs.

Kept apart from app.py so the application factory stays a list of parts. The runner reads
the provider configuration at every step (a change in the settings applies to the next
step; no provider configured is a durable `provider.not_configured` step error), runs
`shell` as PTY host jobs through the terminal service's own connection, and `subagent`
through the session service.
"""

from __future__ import annotations

import asyncio

from aiohttp import web

from desktop.agent.permissions import Permissions
from desktop.agent.runner import SessionRunner
from desktop.agent.service import SessionService
from desktop.agent.subagent import SubagentTool
from desktop.checkpoints import Checkpoints
from desktop.events.bus import DurableBus
from desktop.jobs.host import ShellJobs
from desktop.jobs.service import BackgroundWork
from desktop.provider.profiles import Profile
from desktop.provider.settings import ProviderConfigStore
from desktop.server.appkeys import BACKGROUND, PERMISSIONS, RUNNER, SETTINGS
from desktop.server.routes_checkpoints import CHECKPOINTS
from desktop.tools.base import Tool
from desktop.tools.registry import default_tools
from desktop.tools.shell import ShellTool


def build_runner(app: web.Application, bus: DurableBus) -> SessionRunner:
    from desktop.server.terminals import TERMINALS  # registered later by setup_terminals

    config = ProviderConfigStore(app[SETTINGS])

    async def profile() -> Profile | None:
        return await asyncio.to_thread(config.profile)

    async def connect():  # type: ignore[no-untyped-def]
        return await app[TERMINALS].client()

    async def connect_running():  # type: ignore[no-untyped-def]
        return await app[TERMINALS].running_client()

    jobs = ShellJobs(connect)
    permissions = Permissions(bus)
    shell = ShellTool(jobs)
    tools: dict[str, Tool] = {**default_tools(), "shell": shell}
    settings = app[SETTINGS]
    checkpoints = Checkpoints(
        bus, settings.data_dir / "checkpoints", [settings.data_dir, settings.runtime_dir]
    )
    runner = SessionRunner(
        bus,
        profile=profile,
        tools=tools,
        permissions=permissions,
        private_dirs=(settings.data_dir, settings.runtime_dir),
        jobs=jobs,
        checkpoints=checkpoints,
    )
    app[CHECKPOINTS] = checkpoints
    background = BackgroundWork(
        bus,
        runner,
        jobs,
        # Housekeeping never starts a PTY host (nor keeps one from exiting idle).
        cleanup_host=ShellJobs(connect_running),
        retention=app[SETTINGS].job_retention_seconds,
    )
    shell.on_background = background.shell_backgrounded  # background calls notify when done
    shell.on_foreground = background.shell_foreground  # foreground calls can be moved
    app[BACKGROUND] = background
    runner.on_interrupt.append(background.interrupted)  # children's jobs end with the parent
    app[PERMISSIONS] = permissions
    app[RUNNER] = runner
    return runner


def wire_runner(service: SessionService, runner: SessionRunner, background: BackgroundWork) -> None:
    """What needs both: status announcements and the subagent tool."""
    runner.on_status = service.refresh_status
    service.on_deleted.append(background.cleanup.sessions_deleted)  # their job terminals go

    async def create_child(parent: str, title: str, directory: str) -> str:
        child = await service.create(title=title, directory=directory, parent_id=parent)
        return str(child["id"])

    tool = SubagentTool(
        service.store,
        create_child,
        service.prompt,
        runner.wait_idle,
        runner.interrupt,
        background.subagent_backgrounded,
        on_foreground=background.subagent_foreground,  # foreground children can be moved
    )
    runner.tools.tools[tool.name] = tool
