"""Wire protocol between the service and the PTY host: length-prefixed frames on a Unix socket.

Every frame is a 5-byte header (payload length: u32 big-endian, kind: u8) and a payload:

- JSON   (1): one UTF-8 JSON object: requests, responses, events, attachment messages.
- OUTPUT (2): host -> service: flags (u8), byte offset (u64), then terminal output bytes.
  The offset is the absolute position of the first byte in the terminal's output; with
  FLAG_CHECKPOINT the bytes are a screen checkpoint and the offset is the cursor it ends at.
- INPUT  (3): service -> host: bytes for the PTY of the attached terminal.

A connection starts with a JSON hello carrying the host's secret. On a control connection
requests are `{"id", "op", ...}` and answers `{"id", "ok": true, "result"}` or
`{"id", "ok": false, "error"}`; host events are `{"event": ...}`. An attachment connection
sends one `attach` request; after a successful answer the JSON frames are exactly the
WebSocket text frames of API.md.

Every failure has one shape, PtyHostError's `{"type", "message", "status"}`: under `error` in
a failed answer, and in an error frame `{"type": "error", "message", "error"}` (a failed
hello, a protocol violation, or anything an attached client is told; `message` at the top is
what API.md promises browsers).
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from enum import IntEnum

from desktop.values import strict_int

PROTOCOL_VERSION = 1
HEADER = struct.Struct("!IB")
OUTPUT_HEADER = struct.Struct("!BQ")
FLAG_CHECKPOINT = 1
MAX_PAYLOAD = 4 * 1024 * 1024
# Before the secret is proven a peer may only send a small hello.
MAX_HELLO_PAYLOAD = 4096


class FrameKind(IntEnum):
    JSON = 1
    OUTPUT = 2
    INPUT = 3


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


@dataclass(frozen=True, slots=True)
class OutputFrame:
    offset: int
    data: bytes
    checkpoint: bool = False


@dataclass(frozen=True, slots=True)
class InputFrame:
    data: bytes


Frame = JsonFrame | OutputFrame | InputFrame


def dumps(message: dict[str, object]) -> str:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


def encode_json(message: dict[str, object]) -> bytes:
    payload = dumps(message).encode()
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"JSON frame of {len(payload)} bytes exceeds {MAX_PAYLOAD}")
    return HEADER.pack(len(payload), FrameKind.JSON) + payload


def output_frame_size(data_len: int) -> int:
    return HEADER.size + OUTPUT_HEADER.size + data_len


def write_output_header(
    target: bytearray, data_len: int, offset: int, checkpoint: bool = False
) -> int:
    """Write the headers of an output frame at the start of `target`; returns where data goes."""
    if data_len + OUTPUT_HEADER.size > MAX_PAYLOAD:
        raise ValueError(f"output frame of {data_len} bytes exceeds {MAX_PAYLOAD}")
    HEADER.pack_into(target, 0, OUTPUT_HEADER.size + data_len, FrameKind.OUTPUT)
    OUTPUT_HEADER.pack_into(target, HEADER.size, FLAG_CHECKPOINT if checkpoint else 0, offset)
    return HEADER.size + OUTPUT_HEADER.size


def encode_output(offset: int, data: bytes, checkpoint: bool = False) -> bytes:
    frame = bytearray(output_frame_size(len(data)))
    start = write_output_header(frame, len(data), offset, checkpoint)
    frame[start:] = data
    return bytes(frame)


def encode_input(data: bytes) -> bytes:
    if len(data) > MAX_PAYLOAD:
        raise ValueError(f"input frame of {len(data)} bytes exceeds {MAX_PAYLOAD}")
    return HEADER.pack(len(data), FrameKind.INPUT) + data


def encode_frame(frame: Frame) -> bytes:
    if isinstance(frame, JsonFrame):
        return encode_json(frame.message)
    if isinstance(frame, OutputFrame):
        return encode_output(frame.offset, frame.data, frame.checkpoint)
    return encode_input(frame.data)


def _decode_payload(kind: int, view: memoryview) -> Frame:
    if kind == FrameKind.OUTPUT:
        if len(view) < OUTPUT_HEADER.size:
            raise ProtocolError("output frame shorter than its header")
        flags, offset = OUTPUT_HEADER.unpack_from(view)
        if flags & ~FLAG_CHECKPOINT:
            raise ProtocolError(f"unknown output flags {flags:#x}")
        return OutputFrame(offset, bytes(view[OUTPUT_HEADER.size :]), bool(flags & FLAG_CHECKPOINT))
    if kind == FrameKind.INPUT:
        return InputFrame(bytes(view))
    if kind == FrameKind.JSON:
        try:
            text = str(view, "utf-8")
            message = json.loads(text)
        except (UnicodeDecodeError, ValueError) as exc:
            raise ProtocolError(f"JSON frame is not valid UTF-8 JSON: {exc}") from None
        if not isinstance(message, dict):
            raise ProtocolError("JSON frame must hold an object")
        return JsonFrame(message, text)
    raise ProtocolError(f"unknown frame kind {kind}")


class FrameDecoder:
    """Incremental decoder: feed any split of the byte stream, get whole frames back."""

    def __init__(self, max_payload: int = MAX_PAYLOAD) -> None:
        self.max_payload = max_payload
        self._buffer = bytearray()
        self._failed: ProtocolError | None = None

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    def feed(self, data: bytes | bytearray | memoryview) -> list[Frame]:
        if self._failed is not None:
            raise self._failed
        buffer = self._buffer
        buffer += data
        frames: list[Frame] = []
        position = 0
        size = len(buffer)
        try:
            while size - position >= HEADER.size:
                length, kind = HEADER.unpack_from(buffer, position)
                if kind not in _KINDS:
                    raise ProtocolError(f"unknown frame kind {kind}")
                if length > self.max_payload:
                    raise ProtocolError(
                        f"frame of {length} bytes exceeds the limit of {self.max_payload}"
                    )
                end = position + HEADER.size + length
                if end > size:
                    break
                with memoryview(buffer) as view, view[position + HEADER.size : end] as payload:
                    frames.append(_decode_payload(kind, payload))
                position = end
        except ProtocolError as exc:
            self._failed = exc
            buffer.clear()
            raise
        if position:
            del buffer[:position]
        return frames


_KINDS = frozenset(int(kind) for kind in FrameKind)
