"""Facts about other processes, read from /proc: alive, what they run, when they exit."""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import signal
import time
from pathlib import Path

# A process in one of these states has finished running: it only waits to be reaped.
_FINISHED_STATES = frozenset("ZXx")


def _stat_fields(pid: int | str) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name; None when the process is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except (FileNotFoundError, ProcessLookupError):
        return None
    # The command name is in parentheses and may itself hold spaces or parentheses.
    return raw[raw.rfind(")") + 2 :].split()


def process_cmdline(pid: int) -> list[str] | None:
    """argv of `pid`; None when it is gone (a zombie has an empty argv, also None)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    if not raw:
        return None
    return [part.decode("utf-8", "surrogateescape") for part in raw.rstrip(b"\0").split(b"\0")]


def is_alive(pid: int) -> bool:
    """True while `pid` exists and has not finished (zombies count as dead).

    It never reaps: a child of an asyncio loop must be reaped by the loop's watcher, which
    would otherwise report a made-up exit status."""
    if pid <= 0:
        return False
    fields = _stat_fields(pid)
    return fields is not None and fields[:1] != [] and fields[0] not in _FINISHED_STATES


def wait_for_exit(pid: int, timeout: float) -> bool:
    """Block until `pid` has finished or `timeout` passes; True when it is gone."""
    deadline = time.monotonic() + timeout
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    except OSError:
        pidfd = -1
    try:
        while is_alive(pid):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            if pidfd >= 0:
                # A pidfd becomes readable when the process exits: no polling loop needed.
                poller = select.poll()
                poller.register(pidfd, select.POLLIN)
                poller.poll(remaining * 1000)
            else:
                time.sleep(min(0.02, remaining))
        return True
    finally:
        if pidfd >= 0:
            os.close(pidfd)


async def wait_for_exit_async(pid: int, limit: float) -> bool:
    """`wait_for_exit` on the running event loop (not necessarily our child); False on timeout."""
    if not is_alive(pid):
        return True
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    loop = asyncio.get_running_loop()
    gone: asyncio.Future[None] = loop.create_future()

    def exited() -> None:
        if not gone.done():
            gone.set_result(None)

    loop.add_reader(pidfd, exited)
    try:
        async with asyncio.timeout(limit):
            await gone
    except TimeoutError:
        pass
    finally:
        loop.remove_reader(pidfd)
        os.close(pidfd)
    # A zombie (our own child not reaped yet) counts as gone.
    return not is_alive(pid)


def terminate(pid: int, timeout: float) -> bool:
    """SIGTERM, wait up to `timeout`, then SIGKILL; True when SIGKILL was needed."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    if wait_for_exit(pid, timeout):
        return False
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    if not wait_for_exit(pid, 5.0):
        raise RuntimeError(f"process {pid} survived SIGKILL")
    return True


def process_start_epoch(pid: int | None = None) -> float:
    """Wall-clock time (seconds since the epoch) at which `pid` (default: this one) started."""
    fields = _stat_fields("self" if pid is None else pid)
    if fields is None:
        raise ProcessLookupError(pid)
    start_ticks = int(fields[19])  # field 22 of stat(5), in clock ticks since boot
    since_boot = start_ticks / os.sysconf("SC_CLK_TCK")
    # btime has whole-second resolution; measuring back from now through CLOCK_BOOTTIME
    # keeps the tick resolution (10 ms).
    return time.time() - (time.clock_gettime(time.CLOCK_BOOTTIME) - since_boot)
