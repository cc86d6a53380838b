"""The service's end of the handoff: give a checked WebSocket upgrade's TCP socket to the PTY
host over `pty-host/handoff.sock` (the wire is in protocol.py; the daemon's end is
handoff_listener.py)."""

from __future__ import annotations

import array
import asyncio
import base64
import hashlib
import json
import socket

from desktop.process.registration import HostRegistration
from desktop.ptyhost.hostfiles import handoff_path
from desktop.ptyhost.protocol import (
    HANDOFF_MAX_MESSAGE,
    HANDOFF_MAX_PENDING,
    HANDOFF_TIMEOUT,
    PROTOCOL_VERSION,
    PtyHostError,
    PtyHostUnavailable,
    dumps,
)
from desktop.ptyhost.validation import AttachRequest

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def accept_key(key: str) -> str:
    """`Sec-WebSocket-Accept` for a client's `Sec-WebSocket-Key` (RFC 6455)."""
    digest = hashlib.sha1(key.encode("ascii") + _GUID).digest()
    return base64.b64encode(digest).decode("ascii")


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
    if len(pending) > HANDOFF_MAX_PENDING:
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
        async with asyncio.timeout(HANDOFF_TIMEOUT):
            await loop.sock_connect(link, str(handoff_path(registration)))
            fds = array.array("i", [fd])
            # One small message on a fresh connection: the socket buffer always takes it.
            link.sendmsg([payload], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
            answer = await loop.sock_recv(link, HANDOFF_MAX_MESSAGE)
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
