"""The two wires between the service and the PTY host (control frames on `host.sock`, the
handoff message on `handoff.sock`) and PtyHostError, the one error shape of both; the wires
are described in docs/pty-host.md."""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass

from desktop.values import strict_int

PROTOCOL_VERSION = 1
HEADER = struct.Struct("!IB")
JSON_KIND = 1
MAX_PAYLOAD = 4 * 1024 * 1024
# Before the secret is proven a peer may only send a small hello.
MAX_HELLO_PAYLOAD = 4096
# The handoff: its largest message, the most early client bytes it carries, its time limit.
HANDOFF_MAX_MESSAGE = 64 * 1024
HANDOFF_MAX_PENDING = 16 * 1024
HANDOFF_TIMEOUT = 5.0


class ProtocolError(Exception):
    """The peer sent something that is not a valid frame: the connection must be closed."""


class PtyHostError(Exception):
    """A refusal or failure of the PTY host: a dotted `type`, a sentence, the HTTP `status`
    that fits (what the service answers with). The one error type of both sides."""

    def __init__(self, error_type: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.type = error_type
        self.message = message
        self.status = status

    def to_json(self) -> dict[str, object]:
        return {"type": self.type, "message": self.message, "status": self.status}

    def frame(self) -> dict[str, object]:
        """The error frame that carries this error."""
        return {"type": "error", "message": self.message, "error": self.to_json()}

    @classmethod
    def from_json(cls, value: object) -> PtyHostError:
        """The error of an answer or frame; a malformed one is a 502 of its own."""
        if not isinstance(value, dict):
            return cls("pty.host_error", "The PTY host answered with an unknown error.", 502)
        status = value.get("status")
        return cls(
            str(value.get("type", "pty.host_error")),
            str(value.get("message", "The PTY host refused the request.")),
            status if strict_int(status) else 400,
        )


class PtyHostUnavailable(PtyHostError):
    """The PTY host could not be reached (not running, died, or refused us)."""

    def __init__(self, message: str) -> None:
        super().__init__("pty.host_unavailable", message, 503)


@dataclass(frozen=True, slots=True)
class JsonFrame:
    message: dict[str, object]
    text: str


def dumps(message: dict[str, object]) -> str:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


def encode_json(message: dict[str, object]) -> bytes:
    payload = dumps(message).encode()
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"JSON frame of {len(payload)} bytes exceeds {MAX_PAYLOAD}")
    return HEADER.pack(len(payload), JSON_KIND) + payload


def _decode_payload(view: memoryview) -> JsonFrame:
    try:
        text = str(view, "utf-8")
        message = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ProtocolError(f"JSON frame is not valid UTF-8 JSON: {exc!s:.200}") from None
    if not isinstance(message, dict):
        raise ProtocolError("JSON frame must hold an object")
    return JsonFrame(message, text)


class FrameDecoder:
    """Incremental decoder: feed any split of the byte stream, get whole frames back."""

    def __init__(self, max_payload: int = MAX_PAYLOAD) -> None:
        self.max_payload = max_payload
        self._buffer = bytearray()
        self._failed: ProtocolError | None = None

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    def feed(self, data: bytes | bytearray | memoryview) -> list[JsonFrame]:
        if self._failed is not None:
            raise self._failed
        buffer = self._buffer
        buffer += data
        frames: list[JsonFrame] = []
        position = 0
        size = len(buffer)
        try:
            while size - position >= HEADER.size:
                length, kind = HEADER.unpack_from(buffer, position)
                if kind != JSON_KIND:
                    raise ProtocolError(f"unknown frame kind {kind}")
                if length > self.max_payload:
                    raise ProtocolError(
                        f"frame of {length} bytes exceeds the limit of {self.max_payload}"
                    )
                end = position + HEADER.size + length
                if end > size:
                    break
                with memoryview(buffer) as view, view[position + HEADER.size : end] as payload:
                    frames.append(_decode_payload(payload))
                position = end
        except ProtocolError as exc:
            self._failed = exc
            buffer.clear()
            raise
        if position:
            del buffer[:position]
        return frames
