"""One terminal in the PTY host: its process, output ring, screen model and attachments, and the
output path between them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol

from desktop.native import ExitStatus, PtyProcess
from desktop.ptyhost.flow import FlowLimits
from desktop.ptyhost.output_scan import OutputScanner
from desktop.ptyhost.protocol import PtyHostError
from desktop.ptyhost.ring import OutputRing
from desktop.ptyhost.screen import ScreenModel
from desktop.ptyhost.shells import busy_with
from desktop.ptyhost.spec import TerminalSpec
from desktop.ptyhost.timers import Timers

log = logging.getLogger("desk.ptyhost")

# Unparsed screen-model bytes above which the PTY is no longer read (resumes at half).
SCREEN_PENDING_LIMIT = 8 * 1024 * 1024
# Parse queued screen output in the background after this much quiet.
SCREEN_IDLE_CATCH_UP_SECONDS = 0.3
SCREEN_IDLE_CATCH_UP_BYTES = 512 * 1024
# Foreground process checks on output are throttled to one per interval.
FOREGROUND_CHECK_SECONDS = 0.25
# When the child exited but something else keeps the PTY open, give up reading after this.
EXIT_DRAIN_SECONDS = 1.0
HANGUP_KILL_SECONDS = 2.0
READ_PIECE = 4096
READ_SLICE_SECONDS = 0.0005
LONE_READ_SLICE_SECONDS = 0.002
TYPING_SECONDS = 1.0
FLOOD_YIELD_SECONDS = 0.002
DELETED = PtyHostError("pty.deleted", "The terminal was deleted.", 410)


class Lifecycle(Enum):
    """Where a terminal's process and PTY are; `info()["status"]` is "exited" only at EXITED."""

    RUNNING = "running"  # the child runs; the PTY is read
    DRAINING = "draining"  # the child exited; what is left in the PTY is still read
    HUNG_UP = "hung_up"  # the PTY reached EOF; the child's exit is awaited
    EXITED = "exited"  # final: exit code and final offset known, the process closed


class Viewer(Protocol):
    """What a terminal needs of an attached client (desktop.ptyhost.attachment.Attachment)."""

    @property
    def attachment_id(self) -> str: ...
    @property
    def behind(self) -> int: ...
    def pump(self) -> None: ...
    def send_event(self, message: dict[str, object]) -> None: ...
    def supersede(self) -> None: ...
    def close(self, reason: PtyHostError | None = None) -> None: ...


class TerminalListener(Protocol):
    def terminal_updated(self, terminal: Terminal) -> None: ...
    def terminal_exited(self, terminal: Terminal) -> None: ...


@dataclass
class HostContext:
    """What every terminal shares with the daemon."""

    loop: asyncio.AbstractEventLoop
    executor: Executor
    epoch: str
    read_buffer: bytearray
    listener: TerminalListener
    ring_bytes: int
    flow: FlowLimits
    # Ids of terminals whose last read stopped with output still waiting.
    flooding: set[str] = field(default_factory=set)
    # When and where input was last written (interactive use gets priority over floods).
    last_input: float = 0.0
    last_input_terminal: str | None = None


class Terminal:
    # Saved on `stop --all` / idle exit and revived by the next host (revive.py's policy).
    revivable = True

    def __init__(
        self,
        context: HostContext,
        terminal_id: str,
        spec: TerminalSpec,
        process: PtyProcess | None,
        *,
        created: int | None = None,
    ) -> None:
        self.context = context
        self.id = terminal_id
        self.command = spec.command
        self.args = list(spec.args)
        self.cwd = spec.cwd
        self.group = spec.group
        self.user_title = spec.title or None
        self.osc_title: str | None = None
        self.cols = spec.cols
        self.rows = spec.rows
        self.created = created if created is not None else int(time.time() * 1000)
        self.process = process
        self.pid: int | None = process.pid if process else None
        self.lifecycle = Lifecycle.RUNNING if process else Lifecycle.EXITED
        self.exit_code: int | None = None
        self.foreground_process: str | None = None
        # How this terminal came back from a previous host: "restored" (saved when the app
        # quit) or "recovered" (from the autosave of a host that crashed); None if new.
        self.revived: str | None = None
        self.ring = OutputRing(context.ring_bytes)
        self.screen = ScreenModel(spec.cols, spec.rows)
        self.scanner = OutputScanner()
        self.attachments: list[Viewer] = []
        # The one attachment allowed to type and resize: roles are derived from this alone.
        self.controller: Viewer | None = None
        self.generation = 0
        self.deleted = False
        self.final_offset: int | None = None if process else 0
        self._pauses: set[str] = set()
        self._reading = False
        self._pidfd: int | None = None
        self._last_output = 0.0
        self._last_foreground_check = 0.0
        self._input_backlog = bytearray()
        self._writing = False
        self._input_waiters: list[Callable[[], None]] = []
        self._timers = Timers(context.loop)
        self._screen_job: asyncio.Future[None] | None = None
        self._checkpoint_job: asyncio.Future[tuple[bytes, int]] | None = None
        self.exited = asyncio.Event()
        if process is None:
            self.exited.set()
        if process is not None:
            with contextlib.suppress(OSError):
                self.foreground_process = process.foreground_process()
            self._watch_child()
            self._sync_reader()

    # ----- info -------------------------------------------------------------------------

    @property
    def title(self) -> str:
        return self.user_title or self.osc_title or os.path.basename(self.command)

    @property
    def running(self) -> bool:
        return self.lifecycle is not Lifecycle.EXITED

    @property
    def status(self) -> str:
        return "running" if self.running else "exited"

    @property
    def busy(self) -> str | None:
        """What closing this terminal would end that its person may care about (shells.py)."""
        return busy_with(self.command, self.foreground_process) if self.running else None

    @property
    def pty_open(self) -> bool:
        """The PTY still gives output and takes input."""
        return self.lifecycle in (Lifecycle.RUNNING, Lifecycle.DRAINING)

    def info(self) -> dict[str, object]:
        return {
            "id": self.id,
            "title": self.title,
            "command": self.command,
            "args": list(self.args),
            "cwd": self.cwd,
            "group": self.group,
            "status": self.status,
            "exit_code": self.exit_code,
            "pid": self.pid,
            "foreground_process": self.foreground_process,
            "busy": self.busy,
            "size": {"cols": self.cols, "rows": self.rows},
            "output": {"head": self.ring.head, "tail": self.ring.tail},
            "epoch": self.context.epoch,
            "created": self.created,
            "revived": self.revived,
        }

    # ----- reading output ---------------------------------------------------------------

    def _sync_reader(self) -> None:
        want = self.process is not None and self.pty_open and not self._pauses
        if want == self._reading:
            return
        assert self.process is not None
        if want:
            self.context.loop.add_reader(self.process.fd, self._on_readable)
        else:
            self.context.loop.remove_reader(self.process.fd)
        self._reading = want

    def pause(self, reason: str) -> None:
        if reason not in self._pauses:
            self._pauses.add(reason)
            self._sync_reader()

    def resume(self, reason: str) -> None:
        if reason in self._pauses:
            self._pauses.discard(reason)
            self._sync_reader()

    def _on_readable(self) -> None:
        process = self.process
        if process is None:
            return
        # Read in pieces and stop after a time slice: a PTY read costs the kernel tens of
        # microseconds per 4 KiB (far more while the writer keeps refilling it), so one
        # flooding terminal must not hold the loop, and every other terminal's echo, for
        # milliseconds.
        budget = self.context.flow.read_budget
        flooding = self.context.flooding
        # Terminals that keep the reader busy share one slice per loop iteration; one alone
        # gets a longer slice (fewer, larger frames).
        others = len(flooding) - (self.id in flooding)
        slice_seconds = READ_SLICE_SECONDS / (others + 1) if others else LONE_READ_SLICE_SECONDS
        deadline = time.perf_counter() + slice_seconds
        total = 0
        more = False
        eof = False
        with memoryview(self.context.read_buffer) as view:
            while total < budget:
                with view[total : min(budget, total + READ_PIECE)] as target:
                    try:
                        count = process.read_into(target)
                    except EOFError:
                        eof = True
                        break
                    except OSError as exc:
                        log.warning("terminal %s: read failed (%s); closing it", self.id, exc)
                        eof = True
                        break
                if not count:
                    break
                total += count
                if time.perf_counter() > deadline:
                    more = True
                    break
            else:
                more = True
            data = bytes(view[:total]) if total else b""
        if more and not eof:
            flooding.add(self.id)
            self._yield_to_typing()
        else:
            flooding.discard(self.id)
        if data:
            self.accept_output(data)
        if eof:
            self._on_eof()

    def _yield_to_typing(self) -> None:
        """While someone types in another terminal, read this flooding one less often.

        Reading a PTY while its writer keeps refilling it is slow (lock contention in the
        kernel), and every such read delays the typist's echo. Pausing briefly lets the PTY
        buffer fill (the writer blocks), so the next read is large and cheap."""
        context = self.context
        if (
            context.last_input_terminal not in (None, self.id)
            and time.monotonic() - context.last_input < TYPING_SECONDS
            and "yield" not in self._pauses
        ):
            self.pause("yield")
            self._timers.start("yield", FLOOD_YIELD_SECONDS, lambda: self.resume("yield"))

    def accept_output(self, data: bytes) -> None:
        """Record output (from the PTY, or restored content) and hand it to everyone."""
        self.ring.append(data)
        for attachment in list(self.attachments):
            attachment.pump()
        scan = self.scanner.scan(data)
        if scan.title is not None and scan.title != self.osc_title:
            before = self.title
            self.osc_title = scan.title
            if self.title != before:
                self._title_changed()
        if scan.bell:
            self.broadcast({"type": "bell"})
        self.screen.feed(data)
        now = time.monotonic()
        self._last_output = now
        if self.screen.pending_bytes > SCREEN_PENDING_LIMIT:
            self.pause("screen")
            self._start_screen_catch_up(None)
        else:
            self._schedule_idle_catch_up()
        if now - self._last_foreground_check > FOREGROUND_CHECK_SECONDS:
            self.check_foreground()
        self.check_controller_pressure()

    def check_controller_pressure(self) -> None:
        controller = self.controller
        flow = self.context.flow
        behind = controller.behind if controller is not None else 0
        if behind > flow.controller_pause:
            self.pause("controller")
        elif behind <= flow.controller_resume:
            self.resume("controller")

    # ----- screen model -----------------------------------------------------------------

    def _schedule_idle_catch_up(self) -> None:
        if not self._timers.pending("idle"):
            self._timers.start("idle", SCREEN_IDLE_CATCH_UP_SECONDS, self._idle_catch_up)

    def _idle_catch_up(self) -> None:
        if self.screen.pending_bytes <= 0 or self._screen_job is not None:
            return
        quiet = time.monotonic() - self._last_output
        if quiet < SCREEN_IDLE_CATCH_UP_SECONDS:
            self._timers.start("idle", SCREEN_IDLE_CATCH_UP_SECONDS - quiet, self._idle_catch_up)
            return
        self._start_screen_catch_up(SCREEN_IDLE_CATCH_UP_BYTES)

    def _start_screen_catch_up(self, max_bytes: int | None) -> None:
        if self._screen_job is not None:
            return
        job = self.context.loop.run_in_executor(
            self.context.executor, self.screen.catch_up, max_bytes
        )
        self._screen_job = job
        job.add_done_callback(self._screen_caught_up)

    def _screen_caught_up(self, job: asyncio.Future[None]) -> None:
        self._screen_job = None
        if not job.cancelled() and job.exception() is not None:
            log.error("terminal %s: screen model failed", self.id, exc_info=job.exception())
        pending = self.screen.pending_bytes
        if "screen" in self._pauses:
            if pending <= SCREEN_PENDING_LIMIT // 2:
                self.resume("screen")
            else:
                self._start_screen_catch_up(None)
        elif pending > 0:
            self._schedule_idle_catch_up()

    async def checkpoint(self) -> tuple[bytes, int]:
        """Bytes reproducing the screen and the output offset they correspond to.

        Reading pauses while the model catches up, so the offset is exact."""
        if self._checkpoint_job is None:
            self._checkpoint_job = asyncio.ensure_future(self._take_checkpoint())
        job = self._checkpoint_job
        try:
            return await asyncio.shield(job)
        finally:
            if job.done() and self._checkpoint_job is job:
                self._checkpoint_job = None

    async def _take_checkpoint(self) -> tuple[bytes, int]:
        self.pause("checkpoint")
        try:
            data = await self.context.loop.run_in_executor(
                self.context.executor, self.screen.checkpoint
            )
            return data, self.ring.tail
        finally:
            self.resume("checkpoint")

    async def final_screen(self) -> bytes:
        """A checkpoint for a screen nothing will follow (a saved terminal)."""
        return await self.context.loop.run_in_executor(
            self.context.executor, self.screen.checkpoint, False
        )

    async def snapshot(self) -> dict[str, object]:
        self.pause("snapshot")
        try:
            data, _ = await self.checkpoint()
            lines, (x, y) = await self.context.loop.run_in_executor(
                self.context.executor, self.screen.snapshot
            )
            return {"lines": lines, "cursor": {"x": x, "y": y}, "checkpoint": data}
        finally:
            self.resume("snapshot")

    # ----- titles, foreground process, size ------------------------------------------------

    def _title_changed(self) -> None:
        self.broadcast({"type": "title_changed", "title": self.title})
        self.context.listener.terminal_updated(self)

    def set_user_title(self, title: str | None) -> None:
        before = self.title
        self.user_title = title or None
        if self.title != before:
            self._title_changed()

    def check_foreground(self) -> None:
        self._last_foreground_check = time.monotonic()
        if self.process is None or not self.running:
            return
        try:
            name = self.process.foreground_process()
        except OSError:
            return
        if name is not None and name != self.foreground_process:
            self.foreground_process = name
            self.broadcast(
                {"type": "foreground_process_changed", "process": name, "busy": self.busy}
            )
            self.context.listener.terminal_updated(self)

    def resize(self, cols: int, rows: int) -> None:
        if (cols, rows) != (self.cols, self.rows):
            self.cols, self.rows = cols, rows
            if self.process is not None and self.running:
                try:
                    self.process.resize(cols, rows)
                except OSError as exc:
                    log.warning("terminal %s: resize failed: %s", self.id, exc)
            self.screen.resize(cols, rows)
            self.context.listener.terminal_updated(self)
        self.broadcast(
            {"type": "resized", "cols": cols, "rows": rows, "generation": self.generation}
        )

    # ----- input ------------------------------------------------------------------------

    @property
    def input_backlog(self) -> int:
        return len(self._input_backlog)

    def write_input(self, data: bytes) -> bool:
        """Send input to the PTY; False when it was dropped (the terminal is not running).

        Bytes the PTY does not take at once are kept and written when it is writable; the
        caller should stop reading its peer while `input_backlog` exceeds
        `FlowLimits.input_backlog`."""
        process = self.process
        if process is None or not self.pty_open:
            return False
        self.context.last_input = time.monotonic()
        self.context.last_input_terminal = self.id
        if self._input_backlog:
            self._input_backlog += data
            return True
        try:
            written = process.write(data)
        except OSError as exc:
            log.warning("terminal %s: input write failed: %s", self.id, exc)
            return False
        if written < len(data):
            self._input_backlog += data[written:]
            self.context.loop.add_writer(process.fd, self._on_writable)
            self._writing = True
        return True

    def when_input_drains(self, callback: Callable[[], None]) -> None:
        self._input_waiters.append(callback)

    def _on_writable(self) -> None:
        process = self.process
        if process is None or not self._input_backlog:
            self._stop_writing()
            return
        try:
            written = process.write(memoryview(self._input_backlog))
        except OSError:
            self._input_backlog.clear()
            written = 0
        del self._input_backlog[:written]
        if not self._input_backlog:
            self._stop_writing()
        elif len(self._input_backlog) <= self.context.flow.input_backlog // 2:
            self._wake_input_waiters()

    def _stop_writing(self) -> None:
        if self._writing and self.process is not None:
            self.context.loop.remove_writer(self.process.fd)
        self._writing = False
        self._wake_input_waiters()

    def _wake_input_waiters(self) -> None:
        waiters, self._input_waiters = self._input_waiters, []
        for waiter in waiters:
            waiter()

    # ----- attachments ------------------------------------------------------------------

    def broadcast(self, message: dict[str, object], *, skip: Viewer | None = None) -> None:
        for attachment in list(self.attachments):
            if attachment is not skip:
                attachment.send_event(message)

    def assign_role(self, attachment: Viewer, wants_control: bool, takeover: bool) -> None:
        """Decide the role of a new attachment; at most one controller, ever."""
        current = self.controller
        if not wants_control:
            return
        if current is not None and current.attachment_id == attachment.attachment_id:
            # The same client came back before its old connection was noticed as gone.
            current.supersede()
            current = self.controller
        if current is None or takeover:
            self.controller = attachment
            self.generation += 1
            self.broadcast(
                {
                    "type": "controller_changed",
                    "attachment_id": attachment.attachment_id,
                    "generation": self.generation,
                },
                skip=attachment,
            )

    def add_attachment(self, attachment: Viewer) -> None:
        self.attachments.append(attachment)

    def remove_attachment(self, attachment: Viewer) -> None:
        if attachment in self.attachments:
            self.attachments.remove(attachment)
        if self.controller is attachment:
            self.controller = None
            self.generation += 1
            self.broadcast(
                {"type": "controller_changed", "attachment_id": None, "generation": self.generation}
            )
            self.resume("controller")

    # ----- lifecycle --------------------------------------------------------------------

    def _watch_child(self) -> None:
        assert self.process is not None
        try:
            self._pidfd = os.pidfd_open(self.process.pid)
        except (OSError, AttributeError):
            self._pidfd = None
            self._poll_child_later()
            return
        self.context.loop.add_reader(self._pidfd, self._on_child_exit)

    def _poll_child_later(self) -> None:
        self._timers.start("poll", 0.2, self._poll_child)

    def _poll_child(self) -> None:
        if self.process is None or not self.running:
            return
        if self.process.poll_exit() is not None:
            self._on_child_exit()
        else:
            self._poll_child_later()

    def _on_child_exit(self) -> None:
        if self._pidfd is not None:
            self.context.loop.remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None
        if self.lifecycle is Lifecycle.HUNG_UP:
            self._finish()
        elif self.lifecycle is Lifecycle.RUNNING:
            # Read what is left; something else may hold the PTY open, so do not wait forever.
            self.lifecycle = Lifecycle.DRAINING
            self._timers.start("drain", EXIT_DRAIN_SECONDS, self._drain_check)

    def _drain_check(self) -> None:
        if not self.running:
            return
        if self._pauses or time.monotonic() - self._last_output < EXIT_DRAIN_SECONDS:
            self._timers.start("drain", EXIT_DRAIN_SECONDS, self._drain_check)
            return
        self._finish()

    def _on_eof(self) -> None:
        if self.lifecycle is Lifecycle.DRAINING:
            self._finish()
            return
        if self.lifecycle is not Lifecycle.RUNNING:
            return
        self.lifecycle = Lifecycle.HUNG_UP
        self._sync_reader()
        if self.process is not None and self.process.poll_exit() is not None:
            self._on_child_exit()

    def _finish(self) -> None:
        if not self.running or self.process is None:
            return
        status = self.process.poll_exit()
        if status is None:
            status = ExitStatus(code=None, signal=None)
        self.lifecycle = Lifecycle.EXITED
        self._sync_reader()
        self._stop_writing()
        self._input_backlog.clear()
        self.exit_code = status.exit_code
        self.final_offset = self.ring.tail
        self.context.flooding.discard(self.id)
        self._timers.cancel_all()
        self.process.close()
        for attachment in list(self.attachments):
            attachment.pump()
        self.exited.set()
        self.context.listener.terminal_updated(self)
        self.context.listener.terminal_exited(self)
        if self.deleted:
            self.close_attachments(DELETED)

    def hang_up(self) -> None:
        """SIGHUP the process group now, SIGKILL it if still running after 2 s."""
        if self.process is None or not self.running:
            return
        self.process.signal_group(signal.SIGHUP)
        self.process.signal_group(signal.SIGCONT)
        # A second hang-up keeps the first deadline.
        if not self._timers.pending("kill"):
            self._timers.start("kill", HANGUP_KILL_SECONDS, self._kill)

    def _kill(self) -> None:
        if self.process is not None and self.running:
            self.process.signal_group(signal.SIGKILL)
            # Whatever still holds the PTY open, stop waiting for it soon.
            if self.lifecycle is Lifecycle.DRAINING:
                self._finish()

    def delete(self) -> None:
        self.deleted = True
        if self.running:
            self.hang_up()
        else:
            self.close_attachments(DELETED)
            self._timers.cancel_all()

    def close_attachments(self, reason: PtyHostError) -> None:
        for attachment in list(self.attachments):
            attachment.close(reason)

    async def stop(self, grace: float = 1.0) -> None:
        """Hang up and wait (briefly) for the process; used when the host exits."""
        if self.process is not None and self.running:
            self.hang_up()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.exited.wait(), grace)
            if self.running:
                self.process.signal_group(signal.SIGKILL)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.exited.wait(), grace)
            # Whatever still holds the PTY open, the host is exiting: finish now.
            self._finish()
        self._timers.cancel_all()
        if self._pidfd is not None:
            self.context.loop.remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None
