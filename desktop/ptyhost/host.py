"""The daemon's state: its terminals, the services connected to it, the events they are told,
and when it stops (asked to, on a signal, or idle with no service for a while)."""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from desktop.config import Settings
from desktop.native import PtyProcess, spawn
from desktop.ptyhost import autosave, revive
from desktop.ptyhost.flow import FlowLimits
from desktop.ptyhost.protocol import PtyHostError
from desktop.ptyhost.spec import TerminalSpec
from desktop.ptyhost.terminal import HostContext, Terminal
from desktop.ptyhost.validation import invalid

log = logging.getLogger("desk.ptyhost")

FOREGROUND_POLL_SECONDS = 0.5
READ_BUFFER_BYTES = 256 * 1024
SCREEN_WORKERS = 2


def new_terminal_id() -> str:
    return f"pty_{secrets.token_hex(6)}"


class ServiceLink(Protocol):
    """A service's authenticated control connection, as the host's events reach it."""

    def send_json(self, message: dict[str, object]) -> None: ...
    def close(self) -> None: ...


class PtyHost:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.pid = os.getpid()
        self.epoch = secrets.token_hex(8)
        self.secret = secrets.token_hex(32)
        self.terminals: dict[str, Terminal] = {}
        self.links: set[ServiceLink] = set()
        self.loop = asyncio.get_running_loop()
        self.executor = ThreadPoolExecutor(SCREEN_WORKERS, thread_name_prefix="desk-screen")
        self.context = HostContext(
            loop=self.loop,
            executor=self.executor,
            epoch=self.epoch,
            read_buffer=bytearray(READ_BUFFER_BYTES),
            listener=self,
            ring_bytes=settings.pty_ring_bytes,
            flow=FlowLimits.for_ring(settings.pty_ring_bytes),
        )
        self.stopping: asyncio.Future[bool] = self.loop.create_future()  # result: save?
        self.autosaver = autosave.Autosaver(
            settings.saved_terminals_dir,
            lambda: [t for t in self.terminals.values() if t.revivable],
            settings.pty_autosave_seconds,
        )
        self._idle_timer: asyncio.TimerHandle | None = None
        self._foreground_timer: asyncio.TimerHandle | None = None

    # ----- services ---------------------------------------------------------------------

    def link_opened(self, link: ServiceLink) -> None:
        self.links.add(link)
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None

    def link_closed(self, link: ServiceLink) -> None:
        self.links.discard(link)
        if not self.links:
            self._arm_idle_timer()

    def broadcast(self, message: dict[str, object]) -> None:
        for link in list(self.links):
            link.send_json(message)

    def _arm_idle_timer(self) -> None:
        if self._idle_timer is None and not self.stopping.done():
            self._idle_timer = self.loop.call_later(
                self.settings.pty_host_idle_exit_seconds, self._idle_exit
            )

    def _idle_exit(self) -> None:
        self._idle_timer = None
        if not self.links:
            log.info("no service connected for a while: saving terminals and exiting")
            self.stop(save=True)

    # ----- stopping ---------------------------------------------------------------------

    def stop(self, *, save: bool) -> None:
        if not self.stopping.done():
            self.stopping.set_result(save)

    def stop_and_save(self) -> None:
        self.stop(save=True)

    # ----- TerminalListener -------------------------------------------------------------

    def terminal_updated(self, terminal: Terminal) -> None:
        if not terminal.deleted:
            self.broadcast({"event": "updated", "info": terminal.info()})

    def terminal_exited(self, terminal: Terminal) -> None:
        if not terminal.deleted:
            self.broadcast({"event": "exited", "id": terminal.id, "exit_code": terminal.exit_code})

    # ----- terminals --------------------------------------------------------------------

    def terminal(self, params: dict[str, object]) -> Terminal:
        """The terminal a request names (`terminal`); pty.not_found otherwise."""
        terminal_id = params.get("terminal")
        terminal = self.terminals.get(terminal_id) if isinstance(terminal_id, str) else None
        if terminal is None:
            raise PtyHostError("pty.not_found", f"No terminal {terminal_id!r}.", 404)
        return terminal

    def spawn_terminal(
        self, terminal_id: str, spec: TerminalSpec, *, created: int | None = None
    ) -> Terminal:
        terminal = Terminal(
            self.context, terminal_id, spec, self.spawn_process(spec), created=created
        )
        self.add_terminal(terminal)
        return terminal

    def new_terminal_id(self) -> str:
        return new_terminal_id()

    def spawn_process(self, spec: TerminalSpec) -> PtyProcess:
        """The spec's program in a new PTY; PtyHostError says why it cannot start."""
        try:
            process = spawn(
                [spec.command, *spec.args],
                env=spec.env,
                cwd=spec.cwd,
                cols=spec.cols,
                rows=spec.rows,
            )
        except FileNotFoundError as exc:
            raise PtyHostError(
                "pty.command_not_found", f"Cannot start {spec.command}: {exc}"
            ) from None
        except NotADirectoryError as exc:
            raise PtyHostError(
                "pty.invalid_cwd", f"cwd {spec.cwd!r} is not a directory: {exc}"
            ) from None
        except (OSError, ValueError, TypeError) as exc:
            raise invalid(f"Cannot start {spec.command}: {exc}") from None
        return process

    def add_terminal(self, terminal: Terminal) -> None:
        self.terminals[terminal.id] = terminal
        self.broadcast({"event": "created", "info": terminal.info()})

    def remove_terminal(self, terminal: Terminal) -> None:
        """Delete a terminal: hang it up if it runs, close its attachments, tell everyone."""
        del self.terminals[terminal.id]
        terminal.delete()
        self.autosaver.forget(terminal.id)
        self.broadcast({"event": "deleted", "id": terminal.id})

    # ----- saving and reviving ----------------------------------------------------------

    async def save_terminals(self) -> int:
        return await revive.save_terminals(
            list(self.terminals.values()), self.settings.saved_terminals_dir
        )

    async def revive_terminals(self) -> None:
        await revive.revive_terminals(self, self.settings.saved_terminals_dir)

    # ----- running ----------------------------------------------------------------------

    def start(self) -> None:
        """Begin the timers: idle exit (until a service connects), foreground polling, autosave."""
        self._arm_idle_timer()
        self._poll_foreground()
        self.autosaver.start()

    def _poll_foreground(self) -> None:
        for terminal in list(self.terminals.values()):
            if terminal.running:
                terminal.check_foreground()
        self._foreground_timer = self.loop.call_later(
            FOREGROUND_POLL_SECONDS, self._poll_foreground
        )

    async def close(self, others: list[Terminal]) -> None:
        """Stop the timers, drop every service, and stop every terminal (and `others`)."""
        await self.autosaver.stop()  # already stopped on a clean exit; not after a failure
        if self._foreground_timer is not None:
            self._foreground_timer.cancel()
        if self._idle_timer is not None:
            self._idle_timer.cancel()
        for link in list(self.links):
            link.close()
        terminals = [*self.terminals.values(), *others]
        self.terminals.clear()
        await asyncio.gather(*(terminal.stop() for terminal in terminals))
        self.executor.shutdown(wait=False, cancel_futures=True)
