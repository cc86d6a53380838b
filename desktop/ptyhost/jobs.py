"""The agent's commands in the PTY host: terminals found by their key `job:<session>:<call>`,
started at most once, run non-interactively, kept after they exit until the service removes
them (why: docs/pty-host.md, "Jobs")."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import math
import os
import signal
import time
from collections.abc import Mapping
from typing import Protocol

from desktop.native import PtyProcess
from desktop.ptyhost.protocol import PtyHostError
from desktop.ptyhost.spec import HIDDEN_ENV, TerminalSpec, base_environment, parse_env
from desktop.ptyhost.terminal import HostContext, Terminal
from desktop.ptyhost.validation import (
    JOB_NOT_FOUND,
    MAX_PATH,
    MAX_TITLE,
    invalid,
    optional_str,
    parse_job_key,
    parse_job_session,
    parse_size,
)
from desktop.values import strict_int

# The first output bytes kept aside from the ring, so a long output still has its head.
HEAD_KEEP = 16 * 1024
# Tail bytes an `output` request returns by default and at most (answers stay small frames).
DEFAULT_TAIL_BYTES = 256 * 1024
MAX_TAIL_BYTES = 1024 * 1024
# The kernel's limit for one argument (MAX_ARG_STRLEN) is 128 KiB including the NUL.
MAX_COMMAND_BYTES = 128 * 1024 - 1
MAX_TIMEOUT = 7 * 24 * 3600.0
MAX_WAIT = 3600.0
# SIGTERM first; what still runs after this many seconds gets SIGKILL.
KILL_GRACE = 2.0
JOB_COLS, JOB_ROWS = 120, 32  # wide enough that tools do not clip their lines
JOB_ENV = {
    "TERM": "dumb",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "MANPAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
}
TITLE_CHARS = 60


def job_shell() -> str:
    shell = os.environ.get("SHELL", "")
    if shell and os.path.isabs(shell) and os.access(shell, os.X_OK):
        return shell
    return "/bin/sh"


def job_environment(extra: Mapping[str, str]) -> dict[str, str]:
    env = base_environment()
    env.pop("COLORTERM", None)
    env.update(extra)
    env.update(JOB_ENV)
    for name in HIDDEN_ENV:
        env.pop(name, None)
    return env


def parse_timeout(value: object, name: str, limit: float) -> float | None:
    if value is None:
        return None
    if not (strict_int(value) or isinstance(value, float)) or not math.isfinite(value):
        raise invalid(f"`{name}` must be a number of seconds.")
    if not 0 < value <= limit:
        raise invalid(f"`{name}` must be more than 0 and at most {limit:.0f} seconds.")
    return float(value)


def _now_ms() -> int:
    return int(time.time() * 1000)


class JobTerminal(Terminal):
    """A job's terminal: keeps the first bytes of its output and knows why it ended."""

    revivable = False

    def __init__(
        self,
        context: HostContext,
        terminal_id: str,
        spec: TerminalSpec,
        process: PtyProcess,
        *,
        key: str,
        session_id: str,
        call_id: str,
        command: str,
        timeout: float | None,
    ) -> None:
        self.head = bytearray()
        self.key = key
        self.session_id = session_id
        self.call_id = call_id
        self.job_command = command
        self.timeout = timeout
        self.reason: str | None = None  # "timeout" | "killed" once it was stopped on purpose
        self.collected = False
        self.ended: int | None = None
        super().__init__(context, terminal_id, spec, process)
        if timeout is not None:
            self._timers.start("timeout", timeout, self._timed_out)

    def accept_output(self, data: bytes) -> None:
        if len(self.head) < HEAD_KEEP:
            self.head += data[: HEAD_KEEP - len(self.head)]
        super().accept_output(data)

    def info(self) -> dict[str, object]:
        info = super().info()
        info["job"] = {
            "key": self.key,
            "session_id": self.session_id,
            "call_id": self.call_id,
            "command": self.job_command,
        }
        return info

    def job_info(self) -> dict[str, object]:
        return {
            "key": self.key,
            "session_id": self.session_id,
            "call_id": self.call_id,
            "command": self.job_command,
            "cwd": self.cwd,
            "terminal_id": self.id,
            "pid": self.pid,
            "status": self.status,
            "exit_code": self.exit_code,
            "reason": self.reason,
            "timeout": self.timeout,
            "started": self.created,
            "ended": self.ended,
            "collected": self.collected,
            "output": {"head": self.ring.head, "tail": self.ring.tail},
            "epoch": self.context.epoch,
        }

    def terminate(self, reason: str) -> None:
        """SIGTERM the process group now, SIGKILL what is left after KILL_GRACE."""
        if not self.running or self.process is None:
            return
        self.reason = self.reason or reason
        self.process.signal_group(signal.SIGTERM)
        self.process.signal_group(signal.SIGCONT)
        if not self._timers.pending("kill"):
            self._timers.start("kill", KILL_GRACE, self._kill)

    def _timed_out(self) -> None:
        self.terminate("timeout")

    def delete(self) -> None:
        # The user closed the job's tab: the command ends, its result stays for the service.
        if self.running:
            self.reason = self.reason or "killed"
        super().delete()

    def _finish(self) -> None:
        was_running = self.running
        super()._finish()
        if was_running and not self.running:
            self.ended = _now_ms()


class JobHost(Protocol):
    """What jobs need of the daemon (desktop.ptyhost.host.PtyHost)."""

    @property
    def context(self) -> HostContext: ...
    @property
    def terminals(self) -> dict[str, Terminal]: ...
    def spawn_process(self, spec: TerminalSpec) -> PtyProcess: ...
    def add_terminal(self, terminal: Terminal) -> None: ...
    def remove_terminal(self, terminal: Terminal) -> None: ...
    def new_terminal_id(self) -> str: ...


class Jobs:
    """Every job of the host by key; the handlers of the `job_*` operations."""

    def __init__(self, host: JobHost) -> None:
        self.host = host
        self.jobs: dict[str, JobTerminal] = {}

    # ----- lookup -----------------------------------------------------------------------

    def job(self, params: Mapping[str, object]) -> JobTerminal:
        key, _, _ = parse_job_key(params.get("key"))
        job = self.jobs.get(key)
        if job is None:
            raise PtyHostError(JOB_NOT_FOUND, f"No job {key!r} in this PTY host.", 404)
        return job

    def terminals(self) -> list[Terminal]:
        """Job terminals no longer listed as tabs (closed by the user) but still owned."""
        return [job for job in self.jobs.values() if job.id not in self.host.terminals]

    # ----- operations -------------------------------------------------------------------

    def start(self, params: dict[str, object]) -> object:
        """`job_start {key, command, cwd, timeout?, env?, title?, size?}` ->
        `{job, created}`; an existing key returns its job (created: false), never a rerun."""
        key, session_id, call_id = parse_job_key(params.get("key"))
        command = params.get("command")
        if not isinstance(command, str) or not command.strip():
            raise invalid("`command` must be a non-empty string.")
        if "\0" in command:
            raise invalid("`command` must not contain NUL characters.")
        if len(command.encode("utf-8", "surrogatepass")) > MAX_COMMAND_BYTES:
            raise invalid(f"`command` is longer than {MAX_COMMAND_BYTES} bytes.")
        cwd = optional_str(params, "cwd", MAX_PATH)
        if not cwd or not os.path.isabs(cwd):
            raise PtyHostError("pty.invalid_cwd", "`cwd` must be an absolute path.")
        if not os.path.isdir(cwd):
            raise PtyHostError("pty.invalid_cwd", f"cwd {cwd!r} is not a directory.")
        timeout = parse_timeout(params.get("timeout"), "timeout", MAX_TIMEOUT)
        extra = parse_env(params.get("env"))
        title = optional_str(params, "title", MAX_TITLE)
        cols, rows = JOB_COLS, JOB_ROWS
        if params.get("size") is not None:
            cols, rows = parse_size(params.get("size"))
        existing = self.jobs.get(key)
        if existing is not None:
            if existing.job_command != command:
                raise PtyHostError(
                    "job.conflict", f"Job {key!r} exists and runs another command.", 409
                )
            return {"job": existing.job_info(), "created": False}
        spec = TerminalSpec(
            command=job_shell(),
            args=["-c", command],
            cwd=cwd,
            env=job_environment(extra),
            cols=cols,
            rows=rows,
            title=title or _title(command),
            group=session_id,
        )
        process = self.host.spawn_process(spec)
        job = JobTerminal(
            self.host.context,
            self.host.new_terminal_id(),
            spec,
            process,
            key=key,
            session_id=session_id,
            call_id=call_id,
            command=command,
            timeout=timeout,
        )
        self.jobs[key] = job
        self.host.add_terminal(job)
        return {"job": job.job_info(), "created": True}

    def get(self, params: dict[str, object]) -> object:
        """`job_get {key}` -> the job, or 404 job.not_found."""
        return self.job(params).job_info()

    def list_jobs(self, params: dict[str, object]) -> object:
        """`job_list {session?}` -> jobs, oldest first."""
        session = params.get("session")
        if session is not None:
            parse_job_session(session)
        return [
            job.job_info()
            for job in sorted(self.jobs.values(), key=lambda job: job.created)
            if session is None or job.session_id == session
        ]

    async def wait(self, params: dict[str, object]) -> object:
        """`job_wait {key, within?}` -> the job once it exited, or when `within` seconds
        passed (status still "running"). Other requests are served meanwhile."""
        job = self.job(params)
        within = parse_timeout(params.get("within"), "within", MAX_WAIT)
        if job.running:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(within):
                    await job.exited.wait()
        return job.job_info()

    def output(self, params: dict[str, object]) -> object:
        """`job_output {key, tail_bytes?}` -> `{job, total, head, tail_start, tail, dropped}`:
        `head` (base64) is the first bytes, `tail` (base64) the last ones from offset
        `tail_start`; `dropped` bytes between them are in neither (0: nothing missing)."""
        job = self.job(params)
        limit = params.get("tail_bytes", DEFAULT_TAIL_BYTES)
        if not (strict_int(limit) and 0 < limit <= MAX_TAIL_BYTES):
            raise invalid(f"`tail_bytes` must be an integer from 1 to {MAX_TAIL_BYTES}.")
        ring = job.ring
        head = bytes(job.head) if ring.head > 0 else b""
        start = max(ring.head, len(head), ring.tail - limit)
        tail = ring.read(start, ring.tail)
        return {
            "job": job.job_info(),
            "total": ring.tail,
            "head": base64.b64encode(head).decode("ascii"),
            "tail_start": start,
            "tail": base64.b64encode(tail).decode("ascii"),
            "dropped": start - len(head),
        }

    def kill(self, params: dict[str, object]) -> object:
        """`job_kill {key}` -> the job: SIGTERM to its process group, SIGKILL after
        KILL_GRACE. A finished job is returned unchanged."""
        job = self.job(params)
        job.terminate("killed")
        return job.job_info()

    def collect(self, params: dict[str, object]) -> object:
        """`job_collect {key}` -> the job: the service has its result (reported as
        `collected`; removing the job stays the service's decision)."""
        job = self.job(params)
        job.collected = True
        return job.job_info()

    def remove(self, params: dict[str, object]) -> object:
        """`job_remove {key}` (a finished job) or `{session}` (every job of a deleted
        session; running ones are stopped) -> `{removed}`."""
        session = params.get("session")
        if (session is None) == (params.get("key") is None):
            raise invalid("`job_remove` takes exactly one of `key` and `session`.")
        if session is not None:
            parse_job_session(session)
            doomed = [job for job in self.jobs.values() if job.session_id == session]
            for job in doomed:
                job.terminate("killed")
        else:
            job = self.job(params)
            if job.running:
                raise PtyHostError(
                    "job.running", f"Job {job.key!r} still runs: kill it first.", 409
                )
            doomed = [job]
        for job in doomed:
            self._drop(job)
        return {"removed": len(doomed)}

    # ----- lifecycle --------------------------------------------------------------------

    def _drop(self, job: JobTerminal) -> None:
        if self.jobs.get(job.key) is job:
            del self.jobs[job.key]
        if self.host.terminals.get(job.id) is job:
            self.host.remove_terminal(job)

    def close(self) -> None:
        """Nothing to release: jobs end with the host's terminals."""


def _title(command: str) -> str:
    line = " ".join(command.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"
