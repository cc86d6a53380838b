"""Handing a browser's WebSocket from the service to the PTY host (`SCM_RIGHTS`).

The service authenticates the upgrade request (token or single-use ticket), checks its
query and handshake, and then, instead of relaying frames, passes the connected TCP socket
to the host. The host writes the 101 and speaks WebSocket on it itself (websocket.py), so
each keystroke and each output byte crosses one process instead of two, and the tab stays
connected while the service restarts. The browser still only ever talks to the service's
address and only the service checks its credentials: the host accepts sockets only from a
peer that proves the host's secret on its private socket.

Wire: `pty-host/handoff.sock` (next to host.sock, same 0700 directory), SOCK_SEQPACKET, one
request per connection. The service sends one message: a JSON object (`type: "handoff"`,
`secret`, `protocol`, the attach parameters of protocol.py's `attach` request, `accept`:
the Sec-WebSocket-Accept value, `pending`: base64 of bytes the client sent after its
request, normally none) with exactly one file descriptor in SCM_RIGHTS. The host answers
`{"ok": true}` once it owns the socket, or `{"ok": false, "error": {...}}` having written
nothing to it; the service then answers the HTTP request itself, as before the upgrade.
"""

from __future__ import annotations

import array
import asyncio
import base64
import contextlib
import hmac
import json
import logging
import os
import socket
import stat
import struct
from collections.abc import Awaitable, Callable
from pathlib import Path

from desktop.process.registration import HostRegistration
from desktop.ptyhost.protocol import PROTOCOL_VERSION, PtyHostError, PtyHostUnavailable, dumps
from desktop.ptyhost.validation import AttachRequest

log = logging.getLogger("desk.ptyhost.handoff")

HANDOFF_SOCKET_NAME = "handoff.sock"
MAX_REQUEST = 64 * 1024
MAX_PENDING = 16 * 1024
REQUEST_TIMEOUT = 5.0


def handoff_path(registration: HostRegistration) -> Path:
    return Path(registration.socket).with_name(HANDOFF_SOCKET_NAME)


# ----- the service's side -----------------------------------------------------------------


async def hand_off(
    registration: HostRegistration,
    fd: int,
    terminal_id: str,
    request: AttachRequest,
    accept: str,
    pending: bytes = b"",
) -> None:
    """Give the connected socket `fd` to the host; returns once the host owns it.

    Raises PtyHostError (404 unknown terminal, 400 bad parameters, 503 no host) with
    nothing written to the socket, so the caller can still answer with an HTTP error."""
    if len(pending) > MAX_PENDING:
        raise PtyHostError(
            "request.invalid", "The client sent data before the handshake completed.", 400
        )
    message = {
        "type": "handoff",
        "secret": registration.secret,
        "protocol": PROTOCOL_VERSION,
        "terminal": terminal_id,
        "cursor": request.cursor,
        "attachment_id": request.attachment_id,
        "role": request.role,
        "takeover": request.takeover,
        "epoch": request.epoch,
        "accept": accept,
        "pending": base64.b64encode(pending).decode("ascii"),
    }
    payload = dumps(message).encode()
    loop = asyncio.get_running_loop()
    link = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    link.setblocking(False)
    try:
        async with asyncio.timeout(REQUEST_TIMEOUT):
            await loop.sock_connect(link, str(handoff_path(registration)))
            fds = array.array("i", [fd])
            # One small message on a fresh connection: the socket buffer always takes it.
            link.sendmsg([payload], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
            answer = await loop.sock_recv(link, MAX_REQUEST)
    except (OSError, TimeoutError) as exc:
        raise PtyHostUnavailable(f"Cannot hand the connection to the PTY host: {exc}") from None
    finally:
        link.close()
    try:
        parsed = json.loads(answer)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        raise PtyHostUnavailable("The PTY host did not take the connection.")
    if parsed.get("ok") is not True:
        raise PtyHostError.from_json(parsed.get("error"))


# ----- the host's side --------------------------------------------------------------------

Adopt = Callable[[socket.socket, dict[str, object]], Awaitable[None]]


class HandoffListener:
    """The host's handoff socket: checks each request and passes it on to `adopt`.

    `adopt` validates the attach parameters and takes the socket, raising PtyHostError to
    refuse (the socket is then closed here, nothing written to it)."""

    def __init__(self, path: Path, secret: str, adopt: Adopt) -> None:
        self.path = path
        self.secret = secret.encode()
        self.adopt = adopt
        self.loop = asyncio.get_running_loop()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.tasks: set[asyncio.Task[None]] = set()

    def start(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        self.listener.bind(str(self.path))
        os.chmod(self.path, 0o600)
        self.listener.listen(64)
        self.listener.setblocking(False)
        self.loop.add_reader(self.listener.fileno(), self._accept)

    def close(self) -> None:
        with contextlib.suppress(ValueError, OSError):
            self.loop.remove_reader(self.listener.fileno())
        self.listener.close()
        for task in list(self.tasks):
            task.cancel()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)

    def _accept(self) -> None:
        try:
            link, _ = self.listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            log.warning("handoff accept failed: %s", exc)
            return
        task = asyncio.ensure_future(self._serve(link))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _serve(self, link: socket.socket) -> None:
        link.setblocking(False)
        received: socket.socket | None = None
        try:
            if not _same_user(link):
                return
            async with asyncio.timeout(REQUEST_TIMEOUT):
                data, fds = await self._receive(link)
            try:
                received, message = self._check(data, fds)
                await self.adopt(received, message)
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
        data, fds, flags, _ = socket.recv_fds(link, MAX_REQUEST, 4)
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
    if not isinstance(raw, str) or len(raw) > MAX_PENDING * 2:
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
