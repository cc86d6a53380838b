"""The service's job runner: the agent's commands as PTY host jobs, by session and call."""

from __future__ import annotations

import asyncio
import base64
import functools
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from desktop.config import Settings
from desktop.ptyhost.client import PtyHostClient
from desktop.ptyhost.launcher import ensure_host
from desktop.ptyhost.protocol import PtyHostError, PtyHostUnavailable
from desktop.ptyhost.validation import JOB_NOT_FOUND, job_key
from desktop.tools.base import ToolError
from desktop.tools.output import OUTPUT_BUDGET, clean_output
from desktop.tools.shell import JobRefused, JobResult, JobState, JobStatus

T = TypeVar("T")
Connect = Callable[[], Awaitable[PtyHostClient]]

# One wait request lasts at most this long: a cancelled wait leaves the host waiting for
# no one only briefly, and a lost connection is noticed between slices at the latest.
WAIT_SLICE = 30.0
# Raw tail bytes asked for: far more than the text budget, since escapes and overwritten
# progress lines shrink a lot when cleaned.
TAIL_BYTES = 256 * 1024


class Gone(Exception):
    """The PTY host does not know the job (any more)."""


class ShellJobs:
    """The PTY host's jobs, keyed by session and call:

        jobs = ShellJobs(terminal_service.client)  # or ShellJobs.for_settings(settings)
        state = await jobs.start_job(session_id, call_id, "make test", "/work", kill_after=600)
        state = await jobs.wait_job(state.key)  # "exited", or "gone"
        result = await jobs.job_result(state.key)  # cleaned output + exit code

    It implements desktop.tools.shell.JobRunner and is what restart recovery uses to find a
    call's job again (`find_job`); it holds no state but how to reach the host.
    """

    def __init__(
        self,
        connect: Connect,
        *,
        budget: int = OUTPUT_BUDGET,
        close: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._connect = connect
        self._close = close
        self.budget = budget

    @classmethod
    def for_settings(cls, settings: Settings) -> ShellJobs:
        """A runner with its own connection to the host of `settings` (started if needed);
        `close()` ends that connection. The service passes its TerminalService's instead."""
        current: list[PtyHostClient] = []
        lock = asyncio.Lock()

        async def connect() -> PtyHostClient:
            async with lock:
                if not current or current[0].closed:
                    current[:] = [await ensure_host(settings)]
                return current[0]

        async def close() -> None:
            for client in current:
                await client.close()

        return cls(connect, close=close)

    async def close(self) -> None:
        """Close the connection this runner opened itself (none when given `connect`)."""
        if self._close is not None:
            await self._close()

    # ----- plumbing ---------------------------------------------------------------------

    async def _call(self, work: Callable[[PtyHostClient], Awaitable[T]]) -> T:
        """`work` on a connected client, once more on a fresh connection if the first was
        lost (the host restarted, or it is a new one). Every job request is idempotent."""
        for attempt in (1, 2):
            client = await self._client()
            try:
                return await work(client)
            except PtyHostUnavailable as exc:
                await client.close()
                if attempt == 2:
                    raise ToolError(f"the PTY host cannot be reached: {exc.message}") from None
            except PtyHostError as exc:
                if exc.type == JOB_NOT_FOUND:
                    raise Gone(exc.message) from None
                raise JobRefused(exc.message) from None
        raise AssertionError("unreachable")

    async def _client(self) -> PtyHostClient:
        try:
            return await self._connect()
        except PtyHostUnavailable as exc:
            raise ToolError(f"the PTY host cannot be reached: {exc.message}") from None

    # ----- the API ----------------------------------------------------------------------

    async def start_job(
        self,
        session_id: str,
        call_id: str,
        command: str,
        cwd: str,
        *,
        kill_after: float | None = None,
    ) -> JobState:
        """The call's job, started now (`created`) or found: a key never runs twice."""
        key = _key(session_id, call_id)
        answer = await self._call(
            lambda client: client.job_start(key, command, cwd, kill_after=kill_after)
        )
        job = answer.get("job")
        assert isinstance(job, dict)
        return _state(job, created=answer.get("created") is True)

    async def find_job(self, session_id: str, call_id: str) -> JobState:
        """The call's job as the host has it, or "gone"; never starts anything."""
        return await self.get_job(_key(session_id, call_id))

    async def get_job(self, key: str) -> JobState:
        try:
            return _state(await self._call(lambda client: client.job_get(key)))
        except Gone:
            return JobState(key, "gone")

    async def wait_job(self, key: str, *, within: float | None = None) -> JobState:
        """The job once it exited (or is gone); with `within`, at most that many seconds
        (then possibly still "running"). Cancelling the caller cancels only the wait."""
        deadline = None if within is None else time.monotonic() + within
        while True:
            left = WAIT_SLICE if deadline is None else deadline - time.monotonic()
            if left <= 0:
                return await self.get_job(key)
            piece = min(WAIT_SLICE, left)
            try:
                info = await self._call(
                    functools.partial(PtyHostClient.job_wait, key=key, within=piece)
                )
            except Gone:
                return JobState(key, "gone")
            state = _state(info)
            if state.status != "running":
                return state

    async def job_result(self, key: str, *, collect: bool = True) -> JobResult:
        """The job's cleaned output and exit code (partial while it still runs). `collect`
        tells the host the result is taken, so it may drop the job after its retention."""
        try:
            answer = await self._call(lambda client: client.job_output(key, TAIL_BYTES))
            if collect:
                await self._call(lambda client: client.job_collect(key))
        except Gone:
            return JobResult(key, "gone", None, None, "")
        job = answer.get("job")
        assert isinstance(job, dict)
        state = _state(job)
        head = base64.b64decode(str(answer.get("head", "")))
        tail = base64.b64decode(str(answer.get("tail", "")))
        dropped = _int(answer.get("dropped")) or 0
        total = _int(answer.get("total")) or 0
        text, truncated = self._clean(head, tail, dropped, total)
        return JobResult(
            key,
            state.status,
            state.exit_code,
            state.reason,
            text,
            truncated=truncated,
            total_bytes=total,
            dropped_bytes=dropped,
        )

    def _clean(self, head: bytes, tail: bytes, dropped: int, total: int) -> tuple[str, bool]:
        """Clean what the host kept. When it kept a head and a tail with a gap between, the
        text says so where the gap is: in the cleaner's own cut marker when its cut spans
        the gap (it usually does), else as a line of its own at the seam."""
        if not dropped:
            cleaned = clean_output(head + tail, self.budget)
            return cleaned.text, cleaned.truncated
        lost = f"{dropped} bytes of output ({total} in all) were not kept by the terminal"
        seam = f"\n[... {lost} ...]\n"
        raw = head.decode("utf-8", "replace") + seam + tail.decode("utf-8", "replace")
        cleaned = clean_output(raw, self.budget)
        if seam.strip() in cleaned.text:
            return cleaned.text, True
        marker = (
            f"[... {cleaned.cut_chars} characters ({cleaned.cut_lines} lines) "
            "cut from the middle ...]"
        )
        combined = marker.removesuffix(" ...]") + f"; {lost} ...]"
        return cleaned.text.replace(marker, combined, 1), True

    async def kill_job(self, key: str) -> JobState:
        """SIGTERM the job's process group (SIGKILL after a grace period); its state now."""
        try:
            return _state(await self._call(lambda client: client.job_kill(key)))
        except Gone:
            return JobState(key, "gone")

    async def list_jobs(self, session_id: str | None = None) -> list[JobState]:
        jobs = await self._call(lambda client: client.job_list(session_id))
        return [_state(job) for job in jobs]

    async def remove_job(self, key: str) -> bool:
        """Forget a finished job now (False when the host did not have it)."""
        try:
            await self._call(lambda client: client.job_remove(key))
        except Gone:
            return False
        return True

    async def remove_session_jobs(self, session_id: str) -> int:
        """Stop and forget every job of a deleted session; how many there were."""
        answer = await self._call(lambda client: client.job_remove(session=session_id))
        return _int(answer.get("removed")) or 0


def _key(session_id: str, call_id: str) -> str:
    try:
        return job_key(session_id, call_id)
    except PtyHostError as exc:
        raise JobRefused(exc.message) from None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _state(info: dict[str, object], *, created: bool = False) -> JobState:
    status = info.get("status")
    reason = info.get("reason")
    terminal_id = info.get("terminal_id")
    known: JobStatus = "exited" if status == "exited" else "running"
    return JobState(
        key=str(info.get("key")),
        status=known,
        exit_code=_int(info.get("exit_code")),
        reason=reason if isinstance(reason, str) else None,
        terminal_id=terminal_id if isinstance(terminal_id, str) else None,
        created=created,
        ended=_int(info.get("ended")),
    )
