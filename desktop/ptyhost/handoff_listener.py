"""The daemon's end of the handoff: take a browser's TCP socket from the service over
`pty-host/handoff.sock` (only with the host's secret, only from our own user) and serve an
attachment on it as a WebSocket (websocket.py). The wire is in protocol.py."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hmac
import json
import logging
import os
import secrets
import socket
import stat
import struct
from collections.abc import Awaitable
from pathlib import Path

from desktop.ptyhost.attachment import Attachment
from desktop.ptyhost.host import PtyHost
from desktop.ptyhost.protocol import (
    HANDOFF_MAX_MESSAGE,
    HANDOFF_MAX_PENDING,
    HANDOFF_TIMEOUT,
    PROTOCOL_VERSION,
    PtyHostError,
    dumps,
)
from desktop.ptyhost.validation import AttachRequest, parse_attach
from desktop.ptyhost.websocket import GOING_AWAY, WebSocketSink
from desktop.ptyhost.wsframe import handshake_response

log = logging.getLogger("desk.ptyhost.handoff")

INTERNAL_ERROR = 1011


class HandoffListener:
    """The host's handoff socket, and the WebSockets it took: each request is checked, its
    socket adopted as an attachment; a refusal closes the socket with nothing written."""

    def __init__(self, path: Path, host: PtyHost) -> None:
        self.path = path
        self.host = host
        self.secret = host.secret.encode()
        self.loop = asyncio.get_running_loop()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.tasks: set[asyncio.Future[None]] = set()
        self.websockets: set[WebSocketSink] = set()

    def start(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        self.listener.bind(str(self.path))
        os.chmod(self.path, 0o600)
        self.listener.listen(64)
        self.listener.setblocking(False)
        self.loop.add_reader(self.listener.fileno(), self._accept)

    def close(self) -> None:
        """Stop listening and close every adopted WebSocket with 1001 (going away)."""
        with contextlib.suppress(ValueError, OSError):
            self.loop.remove_reader(self.listener.fileno())
        self.listener.close()
        for task in list(self.tasks):
            task.cancel()
        for websocket in list(self.websockets):
            websocket.close(GOING_AWAY, "PTY host stopping")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)

    # ----- requests ---------------------------------------------------------------------

    def _accept(self) -> None:
        try:
            link, _ = self.listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            log.warning("handoff accept failed: %s", exc)
            return
        self._own(self._serve(link))

    def _own(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _serve(self, link: socket.socket) -> None:
        link.setblocking(False)
        received: socket.socket | None = None
        try:
            if not _same_user(link):
                return
            async with asyncio.timeout(HANDOFF_TIMEOUT):
                data, fds = await self._receive(link)
            try:
                received, message = self._check(data, fds)
                await self._adopt(received, message)
                received = None  # owned by the host now
                answer: dict[str, object] = {"ok": True}
            except PtyHostError as exc:
                answer = {"ok": False, "error": exc.to_json()}
            with contextlib.suppress(OSError):
                link.send(dumps(answer).encode())
        except (OSError, TimeoutError) as exc:
            log.warning("handoff failed: %s", exc)
        finally:
            if received is not None:
                received.close()
            link.close()

    async def _receive(self, link: socket.socket) -> tuple[bytes, list[int]]:
        waiter: asyncio.Future[None] = self.loop.create_future()
        fd = link.fileno()

        def readable() -> None:
            if not waiter.done():
                waiter.set_result(None)

        self.loop.add_reader(fd, readable)
        try:
            await waiter
        finally:
            self.loop.remove_reader(fd)
        data, fds, flags, _ = socket.recv_fds(link, HANDOFF_MAX_MESSAGE, 4)
        if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC):
            for extra in fds:
                os.close(extra)
            return b"", []
        return data, fds

    def _check(self, data: bytes, fds: list[int]) -> tuple[socket.socket, dict[str, object]]:
        """The request's message and its TCP socket; PtyHostError for anything else."""
        sockets = list(fds)
        try:
            message = json.loads(data) if data else None
        except ValueError:
            message = None
        try:
            if not isinstance(message, dict) or message.get("type") != "handoff":
                raise PtyHostError("protocol.invalid_frame", "A handoff is a JSON object.", 400)
            secret = message.get("secret")
            if not isinstance(secret, str) or not hmac.compare_digest(secret.encode(), self.secret):
                raise PtyHostError("auth.failed", "Wrong secret.", 403)
            if message.get("protocol") != PROTOCOL_VERSION:
                raise PtyHostError("protocol.version", "Wrong protocol version.", 400)
            if len(sockets) != 1 or not stat.S_ISSOCK(os.fstat(sockets[0]).st_mode):
                raise PtyHostError("protocol.invalid_frame", "A handoff carries one socket.", 400)
            received = socket.socket(fileno=sockets.pop())
            if received.type != socket.SOCK_STREAM or received.family not in (
                socket.AF_INET,
                socket.AF_INET6,
            ):
                received.close()
                raise PtyHostError("protocol.invalid_frame", "Only TCP sockets are taken.", 400)
            return received, message
        finally:
            for extra in sockets:
                os.close(extra)

    # ----- adopting a WebSocket ---------------------------------------------------------

    async def _adopt(self, sock: socket.socket, message: dict[str, object]) -> None:
        """Take the socket and start its attachment; refusals raise PtyHostError before
        anything is written to the socket."""
        terminal = self.host.terminal(message)
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
        self._own(_go_live(sink, attachment, request))


async def _go_live(sink: WebSocketSink, attachment: Attachment, request: AttachRequest) -> None:
    try:
        live = await attachment.begin(request)
    except Exception:
        log.exception("a WebSocket attachment failed to start")
        sink.close(INTERNAL_ERROR)
        return
    if live:
        sink.go_live()


_PEERCRED = struct.Struct("3i")


def _same_user(link: socket.socket) -> bool:
    """Defence in depth behind the 0700 directory: only our own user hands sockets over."""
    try:
        raw = link.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size)
    except OSError:
        return False
    _, uid, _ = _PEERCRED.unpack(raw)
    return bool(uid == os.getuid())


def pending_bytes(message: dict[str, object]) -> bytes:
    """The early client bytes a handoff carries (checked base64, bounded)."""
    raw = message.get("pending", "")
    if not isinstance(raw, str) or len(raw) > HANDOFF_MAX_PENDING * 2:
        raise PtyHostError("request.invalid", "`pending` must be base64 text.", 400)
    try:
        return base64.b64decode(raw, validate=True)
    except ValueError:
        raise PtyHostError("request.invalid", "`pending` must be base64 text.", 400) from None


def accept_value(message: dict[str, object]) -> str:
    accept = message.get("accept")
    if not isinstance(accept, str) or not 1 <= len(accept) <= 64 or not accept.isascii():
        raise PtyHostError("request.invalid", "`accept` must be the Sec-WebSocket-Accept.", 400)
    if any(char in accept for char in "\r\n"):
        raise PtyHostError("request.invalid", "`accept` must be one header value.", 400)
    return accept
