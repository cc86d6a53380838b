"""`desk pty-host`: the daemon that owns every terminal and outlives the service.

It listens on a Unix socket in a 0700 directory, announces itself through the registration
file, and serves two kinds of connections (see protocol.py): control connections (requests
and terminal events) and attachment connections (one per attached client). Each connection
has its own bounded buffers, so a slow or dead one never holds up another. With no service
connected for `pty_host_idle_exit_seconds` it saves its terminals and exits.
"""

from __future__ import annotations

import asyncio
import base64
import hmac
import logging
import os
import secrets
import signal
import socket
import sys
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import cast

from desktop import eventloop
from desktop.config import Settings
from desktop.native import PtyProcess, spawn
from desktop.process.lock import FileLock
from desktop.process.registration import (
    HostRegistration,
    remove_registration,
    write_registration,
)
from desktop.ptyhost import autosave, revive
from desktop.ptyhost.attachment import Attachment
from desktop.ptyhost.flow import FlowLimits
from desktop.ptyhost.handoff import (
    HANDOFF_SOCKET_NAME,
    HandoffListener,
    accept_value,
    pending_bytes,
)
from desktop.ptyhost.hostfiles import (
    lock_path,
    read_host_registration,
    read_host_settings,
    socket_path,
    usable,
)
from desktop.ptyhost.jobs import Jobs
from desktop.ptyhost.protocol import (
    MAX_HELLO_PAYLOAD,
    MAX_PAYLOAD,
    PROTOCOL_VERSION,
    Frame,
    FrameDecoder,
    InputFrame,
    JsonFrame,
    ProtocolError,
    PtyHostError,
    encode_json,
    output_frame_size,
    write_output_header,
)
from desktop.ptyhost.spec import TerminalSpec, parse_create
from desktop.ptyhost.terminal import HostContext, Terminal
from desktop.ptyhost.validation import (
    MAX_GROUP,
    MAX_TITLE,
    AttachRequest,
    invalid,
    optional_str,
    parse_attach,
    parse_attachment_id,
    parse_size,
)
from desktop.ptyhost.websocket import GOING_AWAY, WebSocketSink
from desktop.ptyhost.wsframe import handshake_response
from desktop.values import strict_int

log = logging.getLogger("desk.ptyhost")

HELLO_TIMEOUT = 5.0
FOREGROUND_POLL_SECONDS = 0.5
CONTROL_BUFFER_LIMIT = 16 * 1024 * 1024
WRITE_HIGH_WATER = 1024 * 1024
READ_BUFFER_BYTES = 256 * 1024
SCREEN_WORKERS = 2
LOCK_WAIT_SECONDS = 10.0


def new_terminal_id() -> str:
    return f"pty_{secrets.token_hex(6)}"


class HostConnection(asyncio.Protocol):
    """One service connection: hello, then either control requests or one attachment."""

    def __init__(self, host: PtyHost) -> None:
        self.host = host
        self.transport: asyncio.Transport | None = None
        self.state = "hello"
        self.role = ""
        self.decoder = FrameDecoder(MAX_HELLO_PAYLOAD)
        self.attachment: Attachment | None = None
        self.tasks: set[asyncio.Task[None]] = set()
        self.authenticated = False
        self._write_paused = False
        self._hello_timer: asyncio.TimerHandle | None = None

    # ----- asyncio.Protocol -------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports implement asyncio.Transport without subclassing it.
        self.transport = cast(asyncio.Transport, transport)
        self.transport.set_write_buffer_limits(high=WRITE_HIGH_WATER)
        self._hello_timer = self.host.loop.call_later(HELLO_TIMEOUT, self._hello_timeout)

    def data_received(self, data: bytes) -> None:
        if self.state == "closed":
            return
        try:
            frames = self.decoder.feed(data)
        except ProtocolError as exc:
            self.fail("protocol.invalid_frame", f"Invalid frame: {exc}")
            return
        for frame in frames:
            if self.state == "closed":
                return
            self._handle(frame)

    def connection_lost(self, exc: Exception | None) -> None:
        was_open = self.authenticated
        self.authenticated = False
        self.state = "closed"
        if self._hello_timer is not None:
            self._hello_timer.cancel()
        if self.attachment is not None:
            self.attachment.detach()
        for task in list(self.tasks):
            task.cancel()
        self.host.connection_closed(self, authenticated=was_open)

    def pause_writing(self) -> None:
        self._write_paused = True

    def resume_writing(self) -> None:
        self._write_paused = False
        if self.attachment is not None:
            self.attachment.pump()

    # ----- AttachmentSink ---------------------------------------------------------------

    @property
    def write_paused(self) -> bool:
        return self._write_paused

    def output_buffer(self, length: int, offset: int, checkpoint: bool) -> tuple[bytearray, int]:
        frame = bytearray(output_frame_size(length))
        return frame, write_output_header(frame, length, offset, checkpoint)

    def send_frame(self, frame: bytes | bytearray) -> None:
        if self.transport is not None and self.state != "closed":
            self.transport.write(frame)

    def send_json(self, message: dict[str, object]) -> None:
        if self.transport is None or self.state == "closed":
            return
        if self.role == "control" and self.transport.get_write_buffer_size() > CONTROL_BUFFER_LIMIT:
            log.warning("closing a control connection that stopped reading")
            self.close()
            return
        self.transport.write(encode_json(message))

    def pause_reading(self) -> None:
        if self.transport is not None and self.state != "closed":
            self.transport.pause_reading()

    def resume_reading(self) -> None:
        if self.transport is not None and self.state != "closed":
            self.transport.resume_reading()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    # ----- frames -----------------------------------------------------------------------

    def fail(self, error_type: str, message: str) -> None:
        """Answer a protocol violation with an error frame and close this connection only."""
        log.warning("closing a connection: %s", message)
        if self.transport is not None and self.state != "closed":
            self.transport.write(encode_json(PtyHostError(error_type, message).frame()))
            self.transport.close()
        if self.attachment is not None:
            self.attachment.detach()
        self.state = "closed"

    def _hello_timeout(self) -> None:
        if self.state == "hello":
            self.fail("auth.timeout", "No hello within the time limit.")

    def _handle(self, frame: Frame) -> None:
        if self.state == "hello":
            self._handle_hello(frame)
        elif self.state == "control":
            if not isinstance(frame, JsonFrame):
                self.fail("protocol.unexpected_frame", "A control connection only sends JSON.")
                return
            self.host.handle_request(self, frame.message)
        elif self.state == "attach":
            if not isinstance(frame, JsonFrame) or frame.message.get("op") != "attach":
                self.fail("protocol.unexpected_frame", "Expected an attach request.")
                return
            self.state = "attaching"
            # Nothing from the client matters until the attachment is live.
            self.pause_reading()
            self.spawn(self.host.attach(self, frame.message))
        elif self.state == "attached":
            attachment = self.attachment
            assert attachment is not None
            if isinstance(frame, InputFrame):
                attachment.handle_input(frame.data)
            elif isinstance(frame, JsonFrame):
                attachment.handle_message(frame.message)
            else:
                self.fail("protocol.unexpected_frame", "Clients do not send output frames.")
        else:
            self.fail("protocol.unexpected_frame", f"Unexpected frame while {self.state}.")

    def _handle_hello(self, frame: Frame) -> None:
        message = frame.message if isinstance(frame, JsonFrame) else {}
        secret = message.get("secret")
        role = message.get("role")
        if message.get("type") != "hello" or not isinstance(secret, str):
            self.fail("auth.failed", "The first frame must be a hello with the host's secret.")
            return
        if not hmac.compare_digest(secret.encode(), self.host.secret.encode()):
            self.fail("auth.failed", "Wrong secret.")
            return
        if message.get("protocol") != PROTOCOL_VERSION:
            self.fail(
                "protocol.version",
                f"This PTY host speaks protocol {PROTOCOL_VERSION}, not {message.get('protocol')}.",
            )
            return
        if role not in ("control", "attach"):
            self.fail("protocol.invalid_role", "role must be 'control' or 'attach'.")
            return
        if self._hello_timer is not None:
            self._hello_timer.cancel()
            self._hello_timer = None
        self.role = str(role)
        self.state = "control" if role == "control" else "attach"
        self.decoder.max_payload = MAX_PAYLOAD
        self.authenticated = True
        self.send_json(
            {
                "type": "welcome",
                "protocol": PROTOCOL_VERSION,
                "epoch": self.host.epoch,
                "pid": os.getpid(),
            }
        )
        self.host.connection_opened(self)

    def spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self.tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("connection task failed", exc_info=task.exception())
            self.close()


Handler = Callable[[dict[str, object]], object]


class PtyHost:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.epoch = secrets.token_hex(8)
        self.secret = secrets.token_hex(32)
        self.terminals: dict[str, Terminal] = {}
        self.connections: set[HostConnection] = set()
        # Browsers' WebSockets handed over by the service (handoff.py); not service links.
        self.websockets: set[WebSocketSink] = set()
        self._websocket_tasks: set[asyncio.Task[None]] = set()
        self.authenticated = 0
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
        self.jobs = Jobs(self)
        self._ops: dict[str, Handler] = {
            "ping": self._op_ping,
            "list": self._op_list,
            "get": self._op_get,
            "create": self._op_create,
            "update": self._op_update,
            "delete": self._op_delete,
            # The agent's commands (desktop/ptyhost/jobs.py has the wire shapes).
            "job_start": self.jobs.start,
            "job_get": self.jobs.get,
            "job_list": self.jobs.list_jobs,
            "job_output": self.jobs.output,
            "job_kill": self.jobs.kill,
            "job_collect": self.jobs.collect,
            "job_remove": self.jobs.remove,
        }
        self._async_ops: dict[str, Callable[[dict[str, object]], Awaitable[object]]] = {
            "snapshot": self._op_snapshot,
            "shutdown": self._op_shutdown,
            "job_wait": self.jobs.wait,
        }

    # ----- connections ------------------------------------------------------------------

    def connection_opened(self, connection: HostConnection) -> None:
        self.connections.add(connection)
        self.authenticated += 1
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None

    def connection_closed(self, connection: HostConnection, *, authenticated: bool) -> None:
        self.connections.discard(connection)
        if authenticated:
            self.authenticated -= 1
        if self.authenticated == 0:
            self._arm_idle_timer()

    def _arm_idle_timer(self) -> None:
        if self._idle_timer is None and not self.stopping.done():
            self._idle_timer = self.loop.call_later(
                self.settings.pty_host_idle_exit_seconds, self._idle_exit
            )

    def _idle_exit(self) -> None:
        self._idle_timer = None
        if self.authenticated == 0:
            log.info("no service connected for a while: saving terminals and exiting")
            self.stop(save=True)

    def stop(self, *, save: bool) -> None:
        if not self.stopping.done():
            self.stopping.set_result(save)

    def _stop_and_save(self) -> None:
        self.stop(save=True)

    def broadcast(self, message: dict[str, object]) -> None:
        for connection in list(self.connections):
            if connection.role == "control":
                connection.send_json(message)

    # ----- TerminalListener -------------------------------------------------------------

    def terminal_updated(self, terminal: Terminal) -> None:
        if not terminal.deleted:
            self.broadcast({"event": "updated", "info": terminal.info()})

    def terminal_exited(self, terminal: Terminal) -> None:
        if not terminal.deleted:
            self.broadcast({"event": "exited", "id": terminal.id, "exit_code": terminal.exit_code})

    # ----- requests ---------------------------------------------------------------------

    def handle_request(self, connection: HostConnection, message: dict[str, object]) -> None:
        request_id = message.get("id")
        op = message.get("op")
        if not strict_int(request_id):
            connection.fail("protocol.invalid_request", "A request needs an integer `id`.")
            return
        sync = self._ops.get(op) if isinstance(op, str) else None
        if sync is not None:
            try:
                result = sync(message)
            except PtyHostError as exc:
                connection.send_json({"id": request_id, "ok": False, "error": exc.to_json()})
            else:
                connection.send_json({"id": request_id, "ok": True, "result": result})
            return
        work = self._async_ops.get(op) if isinstance(op, str) else None
        if work is None:
            error = invalid(f"Unknown operation {op!r}.")
            connection.send_json({"id": request_id, "ok": False, "error": error.to_json()})
            return
        connection.spawn(self._answer(connection, request_id, work(message)))

    async def _answer(
        self, connection: HostConnection, request_id: int, work: Awaitable[object]
    ) -> None:
        try:
            result = await work
        except PtyHostError as exc:
            connection.send_json({"id": request_id, "ok": False, "error": exc.to_json()})
        else:
            connection.send_json({"id": request_id, "ok": True, "result": result})

    def terminal(self, params: dict[str, object]) -> Terminal:
        terminal_id = params.get("terminal")
        terminal = self.terminals.get(terminal_id) if isinstance(terminal_id, str) else None
        if terminal is None:
            raise PtyHostError("pty.not_found", f"No terminal {terminal_id!r}.", 404)
        return terminal

    def _op_ping(self, params: dict[str, object]) -> object:
        return {"epoch": self.epoch, "pid": os.getpid(), "terminals": len(self.terminals)}

    def _op_list(self, params: dict[str, object]) -> object:
        group = optional_str(params, "group", MAX_GROUP)
        return [
            terminal.info()
            for terminal in self.terminals.values()
            if group is None or terminal.group == group
        ]

    def _op_get(self, params: dict[str, object]) -> object:
        return self.terminal(params).info()

    def _op_create(self, params: dict[str, object]) -> object:
        spec = parse_create(params)
        terminal = self.spawn_terminal(new_terminal_id(), spec)
        return terminal.info()

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

    def _op_update(self, params: dict[str, object]) -> object:
        terminal = self.terminal(params)
        attachment_id = parse_attachment_id(params.get("attachment_id"))
        size = parse_size(params["size"]) if params.get("size") is not None else None
        title_given = "title" in params
        title = optional_str(params, "title", MAX_TITLE)
        if size is not None:
            controller = terminal.controller
            if attachment_id is not None and (
                controller is None or controller.attachment_id != attachment_id
            ):
                raise PtyHostError(
                    "pty.not_controller",
                    f"Attachment {attachment_id} is not this terminal's controller.",
                    409,
                )
        if title_given:
            terminal.set_user_title(title)
        if size is not None:
            terminal.resize(*size)
        return terminal.info()

    def _op_delete(self, params: dict[str, object]) -> object:
        self.remove_terminal(self.terminal(params))
        return None

    async def _op_snapshot(self, params: dict[str, object]) -> object:
        terminal = self.terminal(params)
        snapshot = await terminal.snapshot()
        checkpoint = snapshot.pop("checkpoint")
        assert isinstance(checkpoint, bytes)
        snapshot["checkpoint"] = base64.b64encode(checkpoint).decode("ascii")
        snapshot["info"] = terminal.info()
        return snapshot

    async def _op_shutdown(self, params: dict[str, object]) -> object:
        save = params.get("save", True)
        if not isinstance(save, bool):
            raise invalid("`save` must be a boolean.")
        saved = await self.save_terminals() if save else 0
        self.stop(save=False)
        return {"saved": saved}

    # ----- attachments ------------------------------------------------------------------

    async def attach(self, connection: HostConnection, params: dict[str, object]) -> None:
        request_id = params.get("id")
        try:
            terminal = self.terminal(params)
            request = parse_attach(params)
        except PtyHostError as exc:
            connection.send_json({"id": request_id, "ok": False, "error": exc.to_json()})
            connection.close()
            return
        attachment = Attachment(
            terminal, request.attachment_id or f"att_{secrets.token_hex(8)}", connection
        )
        connection.attachment = attachment
        connection.send_json({"id": request_id, "ok": True, "result": None})
        if await self._start(attachment, request) and connection.state == "attaching":
            connection.state = "attached"
            connection.resume_reading()

    async def _start(self, attachment: Attachment, request: AttachRequest) -> bool:
        """Replay and go live; False (the client told why, its connection closed) on failure."""
        try:
            await attachment.start(
                request.cursor or 0,
                wants_control=request.role == "controller",
                takeover=request.takeover,
                same_epoch=request.epoch is None or request.epoch == self.epoch,
            )
        except PtyHostError as exc:
            attachment.sink.send_json(exc.frame())
            attachment.sink.close()
            return False
        return not attachment.closed

    async def adopt_websocket(self, sock: socket.socket, message: dict[str, object]) -> None:
        """Take a browser's WebSocket from the service (handoff.py) and attach it.

        Refusals raise PtyHostError before anything is written to the socket."""
        terminal = self.terminal(message)
        request = parse_attach(message)
        handshake = handshake_response(accept_value(message))
        pending = pending_bytes(message)
        sock.setblocking(False)
        try:
            _, sink = await self.loop.connect_accepted_socket(
                lambda: WebSocketSink(handshake, pending, self.websockets.discard), sock=sock
            )
        except OSError as exc:
            raise PtyHostError(
                "pty.handoff_failed", f"Cannot take the socket: {exc}", 503
            ) from None
        self.websockets.add(sink)
        attachment = Attachment(
            terminal, request.attachment_id or f"att_{secrets.token_hex(8)}", sink
        )
        sink.attachment = attachment
        task = asyncio.ensure_future(self._start_websocket(sink, attachment, request))
        self._websocket_tasks.add(task)
        task.add_done_callback(self._websocket_tasks.discard)

    async def _start_websocket(
        self, sink: WebSocketSink, attachment: Attachment, request: AttachRequest
    ) -> None:
        try:
            live = await self._start(attachment, request)
        except Exception:
            log.exception("a WebSocket attachment failed to start")
            sink.close(1011)
            return
        if live:
            sink.go_live()

    # ----- saving and reviving ----------------------------------------------------------

    async def save_terminals(self) -> int:
        return await revive.save_terminals(
            list(self.terminals.values()), self.settings.saved_terminals_dir
        )

    async def revive_terminals(self) -> None:
        await revive.revive_terminals(self, self.settings.saved_terminals_dir)

    # ----- foreground process polling ---------------------------------------------------

    def _poll_foreground(self) -> None:
        for terminal in list(self.terminals.values()):
            if terminal.running:
                terminal.check_foreground()
        self._foreground_timer = self.loop.call_later(
            FOREGROUND_POLL_SECONDS, self._poll_foreground
        )

    # ----- main -------------------------------------------------------------------------

    async def serve(self) -> int:
        settings = self.settings
        settings.ensure_dirs()
        lock = FileLock(lock_path(settings))
        if not await self._acquire(lock):
            log.info("another PTY host already runs for %s", settings.runtime_dir)
            return 0
        server: asyncio.AbstractServer | None = None
        handoff: HandoffListener | None = None
        path: Path | None = None
        try:
            path = await asyncio.to_thread(socket_path, settings)
            await asyncio.to_thread(path.unlink, missing_ok=True)
            await self.revive_terminals()
            server = await self.loop.create_unix_server(
                lambda: HostConnection(self), path=str(path)
            )
            await asyncio.to_thread(os.chmod, path, 0o600)
            handoff = HandoffListener(
                path.with_name(HANDOFF_SOCKET_NAME), self.secret, self.adopt_websocket
            )
            handoff.start()
            registration = HostRegistration(
                pid=os.getpid(),
                protocol=PROTOCOL_VERSION,
                socket=str(path),
                secret=self.secret,
                epoch=self.epoch,
            )
            await asyncio.to_thread(
                write_registration, settings.pty_host_registration_path, registration
            )
            log.info("PTY host %s listening (pid %d)", self.epoch, os.getpid())
            for signum in (signal.SIGTERM, signal.SIGINT):
                self.loop.add_signal_handler(signum, self._stop_and_save)
            self.loop.add_signal_handler(signal.SIGHUP, lambda: None)
            self._arm_idle_timer()
            self._poll_foreground()
            self.autosaver.start()
            save = await self.stopping
            await asyncio.to_thread(
                remove_registration,
                settings.pty_host_registration_path,
                HostRegistration,
                pid=os.getpid(),
            )
            server.close()
            await self.autosaver.stop()
            if save:
                await self.save_terminals()
            # A clean exit (saved or discarded on purpose): nothing to recover from.
            await self.autosaver.clear()
        finally:
            if handoff is not None:
                handoff.close()
            await self._shutdown(server, path)
            await asyncio.to_thread(lock.release)
        return 0

    async def _acquire(self, lock: FileLock) -> bool:
        """Take the host lock. A host that is still saving and exiting holds it briefly: wait
        for it, unless another live host is registered and serving (then it wins)."""
        deadline = time.monotonic() + LOCK_WAIT_SECONDS
        while True:
            if await asyncio.to_thread(lock.try_acquire):
                return True
            registration = await asyncio.to_thread(read_host_registration, self.settings)
            if usable(registration) or time.monotonic() > deadline:
                return False
            await asyncio.sleep(0.05)

    async def _shutdown(self, server: asyncio.AbstractServer | None, path: Path | None) -> None:
        await self.autosaver.stop()  # already stopped on a clean exit; not after a failure
        if self._foreground_timer is not None:
            self._foreground_timer.cancel()
        if self._idle_timer is not None:
            self._idle_timer.cancel()
        if server is not None:
            server.close()
        for connection in list(self.connections):
            connection.close()
        for task in list(self._websocket_tasks):
            task.cancel()
        for websocket in list(self.websockets):
            websocket.close(GOING_AWAY, "PTY host stopping")
        # Jobs end with the host (they are not saved): closed job tabs still own a process.
        self.jobs.close()
        terminals = [*self.terminals.values(), *self.jobs.terminals()]
        self.terminals.clear()
        await asyncio.gather(*(terminal.stop() for terminal in terminals))
        if path is not None:
            await asyncio.to_thread(path.unlink, missing_ok=True)
        self.executor.shutdown(wait=False, cancel_futures=True)


def run(settings: Settings) -> int:
    """Entry point of `desk pty-host`."""
    # Screen-model parsing runs in threads: switch often so the output loop stays responsive.
    sys.setswitchinterval(0.001)
    # The host's own files are created 0600 in 0700 directories; its umask stays the user's,
    # which every terminal and agent command inherits.
    settings, loop_kind = read_host_settings(settings)

    async def main() -> int:
        return await PtyHost(settings).serve()

    started = time.monotonic()
    try:
        return eventloop.run(main(), loop_kind)
    finally:
        log.info("PTY host exited after %.0f s", time.monotonic() - started)
