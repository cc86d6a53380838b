"""One client attached to a terminal: replay, live output pulled from the terminal's ring under
ack-based flow control, and roles.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from desktop.ptyhost.protocol import PtyHostError
from desktop.ptyhost.terminal import Terminal
from desktop.ptyhost.validation import Ack, AttachRequest, ClientMessage

log = logging.getLogger("desk.ptyhost")

REPLAY_CHUNK = 1024 * 1024


class AttachmentSink(Protocol):
    """The connection an attachment writes to: a browser's WebSocket handed to the host
    (websocket.py)."""

    @property
    def write_paused(self) -> bool: ...
    def output_buffer(self, length: int) -> tuple[bytearray, int]:
        """A whole output frame for `length` bytes, header written; the bytes go at [1]."""
        ...

    def send_frame(self, frame: bytes | bytearray) -> None: ...
    def send_json(self, message: dict[str, object]) -> None: ...
    def pause_reading(self) -> None: ...
    def resume_reading(self) -> None: ...
    def close(self) -> None: ...


class Attachment:
    def __init__(self, terminal: Terminal, attachment_id: str, sink: AttachmentSink) -> None:
        self.terminal = terminal
        self.attachment_id = attachment_id
        self.sink = sink
        self.sent = 0
        self.bytes_sent = 0
        self.bytes_acked = 0
        self.live = False
        self.closed = False
        self.desynced = False
        self.exited_sent = False
        self._window_closed = False
        self._resync_task: asyncio.Task[None] | None = None

    # ----- accounting -------------------------------------------------------------------

    @property
    def role(self) -> str:
        """The terminal decides: its controller is the one attachment that may type."""
        return "controller" if self.terminal.controller is self else "observer"

    @property
    def inflight(self) -> int:
        """Binary bytes sent but not yet acknowledged by the client."""
        return self.bytes_sent - self.bytes_acked

    @property
    def behind(self) -> int:
        """How far the client is from the terminal's tail: unsent plus unacknowledged."""
        if not self.live or self.desynced:
            return 0
        return max(0, self.terminal.ring.tail - self.sent) + self.inflight

    # ----- attaching --------------------------------------------------------------------

    async def begin(self, request: AttachRequest) -> bool:
        """Replay and go live; False (the client told why, its connection closing) on failure."""
        epoch = request.epoch
        try:
            await self.start(
                request.cursor or 0,
                wants_control=request.role == "controller",
                takeover=request.takeover,
                same_epoch=epoch is None or epoch == self.terminal.context.epoch,
            )
        except PtyHostError as exc:
            self.sink.send_json(exc.frame())
            self.sink.close()
            return False
        return not self.closed

    async def start(
        self, requested: int, *, wants_control: bool, takeover: bool, same_epoch: bool
    ) -> None:
        """Send `attached`, the replay and `replay_complete`, then go live."""
        terminal = self.terminal
        ring = terminal.ring
        checkpoint: bytes | None = None
        end = ring.tail
        if not same_epoch or not ring.head <= requested <= ring.tail:
            checkpoint, end = await terminal.checkpoint()
            if terminal.deleted:
                raise PtyHostError("pty.not_found", f"No terminal {terminal.id}.", 404)
        if self.closed:
            return
        # From here on nothing awaits: no output can slip between the replay and live bytes.
        terminal.assign_role(self, wants_control, takeover)
        self.sink.send_json(
            {
                "type": "attached",
                "attachment_id": self.attachment_id,
                "role": self.role,
                "generation": terminal.generation,
                "info": terminal.info(),
                "replay": {
                    "requested": requested,
                    "available": ring.head,
                    "end": end,
                    "truncated": checkpoint is not None,
                },
            }
        )
        if checkpoint is not None:
            self._send_checkpoint(checkpoint, end)
        else:
            self._send_ring(requested, end, REPLAY_CHUNK)
        self.sent = end
        self.sink.send_json({"type": "replay_complete", "end": end})
        self.live = True
        terminal.add_attachment(self)
        self.pump()

    def _send_checkpoint(self, data: bytes, end: int) -> None:
        view = memoryview(data)
        for start in range(0, len(data), REPLAY_CHUNK):
            piece = view[start : start + REPLAY_CHUNK]
            frame, at = self.sink.output_buffer(len(piece))
            frame[at:] = piece
            self.sink.send_frame(frame)
        self.bytes_sent += len(data)

    def _send_ring(self, start: int, end: int, chunk: int) -> None:
        ring = self.terminal.ring
        while start < end:
            count = min(end - start, chunk)
            frame, at = self.sink.output_buffer(count)
            ring.copy_into(frame, at, start, start + count)
            self.sink.send_frame(frame)
            start += count
            self.bytes_sent += count

    # ----- live output ------------------------------------------------------------------

    def pump(self) -> None:
        """Send what the window allows; called on new output, acks and writable sockets."""
        if not self.live or self.closed:
            return
        terminal = self.terminal
        ring = terminal.ring
        flow = terminal.context.flow
        if self.desynced:
            ready = self.inflight <= flow.window_low and not self.sink.write_paused
            if self._resync_task is None and ready:
                self._resync_task = asyncio.ensure_future(self._resync())
            return
        if self.sent < ring.head:
            # The ring overwrote bytes this client has not been sent: resynchronise.
            self.desynced = True
            self.pump()
            return
        if self._window_closed and self.inflight <= flow.window_low:
            self._window_closed = False
        available = ring.tail - self.sent
        if available > 0 and not self._window_closed and not self.sink.write_paused:
            count = min(available, flow.window_high - self.inflight)
            if count > 0:
                self._send_ring(self.sent, self.sent + count, flow.chunk)
                self.sent += count
            if self.inflight >= flow.window_high:
                self._window_closed = True
        if (
            not self.exited_sent
            and terminal.final_offset is not None
            and not terminal.running
            and self.sent >= terminal.final_offset
        ):
            self.exited_sent = True
            self.sink.send_json(
                {
                    "type": "exited",
                    "exit_code": terminal.exit_code,
                    "final_offset": terminal.final_offset,
                }
            )

    async def _resync(self) -> None:
        try:
            checkpoint, end = await self.terminal.checkpoint()
        except Exception:
            log.exception("terminal %s: checkpoint for a resync failed", self.terminal.id)
            self.close(
                PtyHostError(
                    "pty.checkpoint_failed", "The terminal's screen could not be captured.", 500
                )
            )
            return
        finally:
            self._resync_task = None
        if self.closed:
            return
        self.sink.send_json({"type": "resync", "end": end})
        self._send_checkpoint(checkpoint, end)
        self.sent = end
        self.desynced = False
        self.pump()

    def send_event(self, message: dict[str, object]) -> None:
        if self.live and not self.closed:
            self.sink.send_json(message)

    def error(self, error: PtyHostError) -> None:
        self.send_event(error.frame())

    # ----- from the client --------------------------------------------------------------

    def handle_input(self, data: bytes) -> None:
        terminal = self.terminal
        if self.role != "controller":
            self.error(
                PtyHostError(
                    "pty.not_controller",
                    "Input dropped: this attachment is an observer; only the controller types.",
                    409,
                )
            )
            return
        if not terminal.write_input(data):
            self.error(
                PtyHostError("pty.not_running", "Input dropped: the terminal is not running.", 409)
            )
            return
        if terminal.input_backlog > terminal.context.flow.input_backlog:
            # The program is not reading its input: stop reading ours until it does.
            self.sink.pause_reading()
            terminal.when_input_drains(self.sink.resume_reading)

    def handle_client(self, parsed: ClientMessage) -> None:
        if isinstance(parsed, Ack):
            self.bytes_acked = min(self.bytes_sent, self.bytes_acked + parsed.count)
            self.pump()
            if self.terminal.controller is self:
                self.terminal.check_controller_pressure()
        elif self.role != "controller":
            self.error(
                PtyHostError(
                    "pty.not_controller",
                    "Resize refused: only the controller sets the terminal's size.",
                    409,
                )
            )
        else:
            self.terminal.resize(parsed.cols, parsed.rows)

    # ----- ending -----------------------------------------------------------------------

    def supersede(self) -> None:
        """The same attachment id connected again: this older connection gives way."""
        self.close(
            PtyHostError(
                "pty.superseded",
                "Replaced by a newer connection with the same attachment_id.",
                409,
            )
        )

    def close(self, reason: PtyHostError | None = None) -> None:
        if self.closed:
            return
        if reason is not None:
            self.error(reason)
        self.detach()
        self.sink.close()

    def detach(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self._resync_task is not None:
            self._resync_task.cancel()
            self._resync_task = None
        self.terminal.remove_attachment(self)
