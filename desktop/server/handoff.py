"""The service's end of a WebSocket handoff: once the connect route has checked an upgrade, its
connection goes to the PTY host (desktop.ptyhost.handoff_client), which writes the 101 and
serves the attachment; a refusal leaves the connection here, untouched, for a JSON error."""

from __future__ import annotations

from aiohttp import web

from desktop.process.registration import HostRegistration
from desktop.ptyhost.handoff_client import accept_key, hand_off
from desktop.ptyhost.validation import AttachRequest
from desktop.server.errors import ApiError


class HandedOff(web.StreamResponse):
    """The response of a handed-off upgrade: aiohttp must write nothing more (the PTY host
    wrote the 101); 101 is what the access log shows."""

    def __init__(self) -> None:
        super().__init__(status=101)
        self.force_close()

    async def prepare(self, request: web.BaseRequest) -> None:
        return None

    async def write_eof(self, data: bytes = b"") -> None:
        return None


async def hand_over(
    request: web.Request,
    registration: HostRegistration,
    terminal_id: str,
    params: AttachRequest,
) -> web.StreamResponse:
    """Give the request's connection to the PTY host; raises PtyHostError if it refuses."""
    transport = request.transport
    raw = transport.get_extra_info("socket") if transport is not None else None
    key = request.headers.get("Sec-WebSocket-Key", "")
    if transport is None or raw is None or transport.is_closing():
        raise ApiError(400, "request.websocket_required", "The connection is already closing.")
    # Bytes the client sends from now on stay in the kernel for the host to read.
    transport.pause_reading()
    # What aiohttp read past the request head (RFC 6455 clients send nothing before the
    # 101; kept for the host anyway). A private attribute: absent means nothing read.
    pending = bytes(getattr(request.protocol, "_message_tail", b""))
    try:
        await hand_off(registration, raw.fileno(), terminal_id, params, accept_key(key), pending)
    except BaseException:
        if not transport.is_closing():
            transport.resume_reading()
        raise
    # The host owns the connection now: drop ours without writing (no FIN: the host's
    # descriptor keeps it open).
    transport.abort()
    return HandedOff()
