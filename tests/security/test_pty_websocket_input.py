"""The PTY host reads any frame, however deeply nested its JSON: a terminal WebSocket's text
frame becomes an invalid-message error (answered, the connection kept), a control frame a
protocol error (answered with an error frame), never an exception out of the parser."""

from __future__ import annotations

import pytest

from desktop.ptyhost.protocol import HEADER, JSON_KIND, FrameDecoder, ProtocolError, PtyHostError
from desktop.ptyhost.validation import parse_client_text

DEEP = "[" * 200_000 + "]" * 200_000


def test_a_deeply_nested_client_message_is_an_invalid_message_not_a_crash() -> None:
    with pytest.raises(PtyHostError):
        parse_client_text(DEEP)
    with pytest.raises(PtyHostError):
        parse_client_text('{"type": "resize", "cols": ' + "[" * 100_000 + "}")


def test_a_deeply_nested_control_frame_is_a_protocol_error() -> None:
    payload = DEEP.encode()
    decoder = FrameDecoder()
    with pytest.raises(ProtocolError, match="not valid UTF-8 JSON"):
        decoder.feed(HEADER.pack(len(payload), JSON_KIND) + payload)
