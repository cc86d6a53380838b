"""`shell`: the agent's commands, run as jobs in the PTY host (keyed by session and call,
idempotent) rather than as our children."""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from desktop.tools.base import Tool, ToolContext, ToolError, ToolResult, arguments, confine

DEFAULT_TIMEOUT = 600.0  # seconds a foreground command may run unless it asks otherwise
MAX_TIMEOUT = 86_400.0
MIN_TIMEOUT = 1.0

JobStatus = Literal["running", "exited", "gone"]


@dataclass(frozen=True, slots=True)
class JobState:
    """Where a job is. `gone`: the PTY host does not have it (it died with the host, or was
    removed); its tool call can only be settled as interrupted."""

    key: str
    status: JobStatus
    exit_code: int | None = None
    reason: str | None = None  # "timeout" | "killed" when it was stopped on purpose
    terminal_id: str | None = None
    created: bool = False  # start_job: this call started it (False: adopted)
    ended: int | None = None  # when its command ended (ms since the epoch), once it exited


@dataclass(frozen=True, slots=True)
class JobResult:
    """A job's output made readable (escapes stripped, CR overwrites resolved, head and
    tail kept within the budget) and how it ended."""

    key: str
    status: JobStatus
    exit_code: int | None
    reason: str | None
    output: str
    truncated: bool = False
    total_bytes: int = 0
    dropped_bytes: int = 0  # bytes the terminal kept in neither its head nor its ring


class JobRefused(ToolError):
    """The job runner refused the request (a bad argument it checked); readable as is."""


class JobRunner(Protocol):
    """What the shell tool needs of the job runner (desktop.jobs.host)."""

    async def start_job(
        self, session: str, call: str, command: str, cwd: str, /, *, kill_after: float | None = None
    ) -> JobState: ...
    async def wait_job(self, key: str, *, within: float | None = None) -> JobState: ...
    async def job_result(self, key: str) -> JobResult: ...
    async def kill_job(self, key: str) -> JobState: ...


class Interrupt(Protocol):
    def is_set(self) -> bool: ...


@dataclass(frozen=True, eq=False)
class ShellContext(ToolContext):
    """A tool context for one shell call: which session and call the job belongs to, and
    the turn's interrupt flag (an asyncio.Event the runner sets before cancelling)."""

    session_id: str = ""
    call_id: str = ""
    interrupted: Interrupt | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class ShellArgs:
    command: str
    cwd: str
    timeout: float | None
    background: bool


def parse_shell_args(args: Mapping[str, Any], ctx: ToolContext) -> ShellArgs:
    """The checks the schema cannot express. Blocking (confine stats paths): use a thread."""
    command = args["command"]
    if not command.strip():
        raise ToolError("command must not be blank")
    if "\0" in command:
        raise ToolError("command must not contain NUL characters")
    background = bool(args.get("background", False))
    timeout = args.get("timeout")
    if timeout is not None and not math.isfinite(timeout):
        raise ToolError(
            f"timeout must be a number of seconds from {MIN_TIMEOUT:.0f} to {MAX_TIMEOUT:.0f}"
        )
    if timeout is None and not background:
        timeout = DEFAULT_TIMEOUT
    raw_cwd = args.get("cwd")
    cwd = confine(ctx, raw_cwd) if raw_cwd else confine(ctx, str(ctx.root))
    if not cwd.is_dir():
        raise ToolError(f"cwd {raw_cwd or ctx.root} is not a folder")
    return ShellArgs(
        command=command,
        cwd=str(cwd),
        timeout=float(timeout) if timeout is not None else None,
        background=background,
    )


def result_text(result: JobResult, timeout: float | None) -> str:
    """The output, then one line saying how the command ended."""
    body = result.output if result.output.strip() else "(no output)"
    if not body.endswith("\n"):
        body += "\n"
    code = f"exit code {result.exit_code}"
    if result.reason == "timeout":
        limit = f" after {timeout:g} s" if timeout is not None else ""
        return f"{body}[timed out{limit}: the command was killed ({code})]"
    if result.reason == "killed":
        return f"{body}[the command was killed ({code})]"
    return f"{body}[{code}]"


GONE_TEXT = (
    "Tool execution interrupted: the command's terminal is gone (the PTY host that ran it "
    "stopped), so its result is unknown."
)


# Told when a call goes to the background (desktop.jobs.service), so its
# completion becomes a notice: (context, the job's state, its command).
OnBackground = Callable[[ShellContext, JobState, str], Awaitable[None]]
# Waits for a foreground call's job in a way the person can move to the background
# (POST /api/session/{id}/background); True when it was moved.
OnForeground = Callable[[ShellContext, JobState, str], Awaitable[bool]]


async def run_shell(
    jobs: JobRunner,
    ctx: ShellContext,
    args: ShellArgs,
    on_background: OnBackground | None = None,
    on_foreground: OnForeground | None = None,
) -> ToolResult:
    """Start (or adopt) the call's job; in the foreground wait for it and return its result.

    On cancellation the job is killed only if the turn was interrupted; otherwise (the
    service stopping) it keeps running for the successor to adopt."""
    state = await jobs.start_job(
        ctx.session_id, ctx.call_id, args.command, args.cwd, kill_after=args.timeout
    )
    metadata: dict[str, Any] = {
        "job": state.key,
        "terminal_id": state.terminal_id,
        "adopted": not state.created,
    }
    if args.background:
        if on_background is not None:
            await on_background(ctx, state, args.command)
        return ToolResult(
            f"Started in the background as job {state.key}; its output arrives when it ends.",
            metadata={**metadata, "status": "running", "background": True},
        )
    try:
        if on_foreground is not None and await on_foreground(ctx, state, args.command):
            return ToolResult(
                f"Moved to the background as job {state.key}; its output arrives when it ends.",
                metadata={**metadata, "status": "running", "background": True},
            )
        final = await jobs.wait_job(state.key)
    except asyncio.CancelledError:
        if ctx.interrupted is not None and ctx.interrupted.is_set():
            # Shielded: the kill must reach the host although this task is being cancelled.
            with contextlib.suppress(Exception):
                await asyncio.shield(jobs.kill_job(state.key))
        raise
    if final.status == "gone":
        return ToolResult(GONE_TEXT, error=True, metadata={**metadata, "status": "gone"})
    result = await jobs.job_result(state.key)
    if result.status == "gone":
        return ToolResult(GONE_TEXT, error=True, metadata={**metadata, "status": "gone"})
    return ToolResult(
        result_text(result, args.timeout),
        metadata={
            **metadata,
            "status": result.status,
            "exit_code": result.exit_code,
            "reason": result.reason,
            "truncated": result.truncated,
            "dropped_bytes": result.dropped_bytes,
        },
    )


class ShellTool(Tool):
    name = "shell"
    description = (
        "Run a shell command in the session's working directory and return its output and "
        "exit code. The command runs non-interactively (no pager; git never prompts). "
        f"`timeout` in seconds (default {DEFAULT_TIMEOUT:.0f}) kills it and its children. "
        "With `background: true` it returns at once and the result arrives later."
    )
    parameters = arguments(
        ["command"],
        command={"type": "string", "minLength": 1, "description": "The command line"},
        background={"type": "boolean", "description": "Return at once; notify later"},
        timeout={
            "type": "number",
            "minimum": MIN_TIMEOUT,
            "maximum": MAX_TIMEOUT,
            "description": "Seconds before the command is killed",
        },
        cwd={"type": "string", "description": "Folder to run in (default: workspace)"},
    )

    def __init__(
        self,
        jobs: JobRunner,
        on_background: OnBackground | None = None,
        on_foreground: OnForeground | None = None,
    ) -> None:
        self.jobs = jobs
        self.on_background = on_background
        self.on_foreground = on_foreground

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if not isinstance(ctx, ShellContext) or not ctx.session_id or not ctx.call_id:
            raise TypeError("the shell tool needs a ShellContext naming its session and call")
        parsed = await asyncio.to_thread(parse_shell_args, args, ctx)
        return await run_shell(self.jobs, ctx, parsed, self.on_background, self.on_foreground)
