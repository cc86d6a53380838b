"""The server half of RFC 6455 the PTY host writes itself: the 101 response and data frames,
each built in one buffer.
"""

from __future__ import annotations

import struct

OP_TEXT = 0x1
OP_BINARY = 0x2
_FIN = 0x80
_SHORT = struct.Struct("!BB")
_MEDIUM = struct.Struct("!BBH")
_LONG = struct.Struct("!BBQ")


def handshake_response(accept: str) -> bytes:
    """The 101 that completes the opening handshake (no extensions, no subprotocol)."""
    return (
        "HTTP/1.1 101 Switching Protocols\r\n"
        "Upgrade: websocket\r\n"
        "Connection: Upgrade\r\n"
        f"Sec-WebSocket-Accept: {accept}\r\n"
        "\r\n"
    ).encode("ascii")


def header_size(length: int) -> int:
    if length < 126:
        return 2
    if length < 1 << 16:
        return 4
    return 10


def write_header(target: bytearray, opcode: int, length: int) -> int:
    """Write a final, unmasked frame header at the start of `target`; returns its size."""
    if length < 126:
        _SHORT.pack_into(target, 0, _FIN | opcode, length)
        return 2
    if length < 1 << 16:
        _MEDIUM.pack_into(target, 0, _FIN | opcode, 126, length)
        return 4
    _LONG.pack_into(target, 0, _FIN | opcode, 127, length)
    return 10


def output_buffer(length: int) -> tuple[bytearray, int]:
    """A binary frame of `length` payload bytes with its header written; payload goes at [1]."""
    frame = bytearray(header_size(length) + length)
    return frame, write_header(frame, OP_BINARY, length)


def text_frame(payload: bytes) -> bytes:
    frame = bytearray(header_size(len(payload)) + len(payload))
    start = write_header(frame, OP_TEXT, len(payload))
    frame[start:] = payload
    return bytes(frame)
