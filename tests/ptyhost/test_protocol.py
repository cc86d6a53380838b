"""Framing of the PTY host's control protocol: round trips over any split, clear errors on
garbage."""

from __future__ import annotations

from typing import cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop.ptyhost.protocol import (
    HEADER,
    MAX_PAYLOAD,
    FrameDecoder,
    JsonFrame,
    ProtocolError,
    dumps,
    encode_json,
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
JsonObject = dict[str, object]
json_objects = st.dictionaries(st.text(max_size=10), json_values, max_size=5)

frames = json_objects.map(
    lambda message: JsonFrame(cast(JsonObject, message), dumps(cast(JsonObject, message)))
)


def split(stream: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(cut, len(stream)) for cut in cuts})
    pieces, start = [], 0
    for point in points:
        pieces.append(stream[start:point])
        start = point
    pieces.append(stream[start:])
    return pieces


@settings(max_examples=200, deadline=None)
@given(st.lists(frames, max_size=8), st.lists(st.integers(0, 4000), max_size=12))
def test_any_split_of_a_stream_decodes_to_the_same_frames(
    sent: list[JsonFrame], cuts: list[int]
) -> None:
    stream = b"".join(encode_json(frame.message) for frame in sent)
    decoder = FrameDecoder()
    received: list[JsonFrame] = []
    for piece in split(stream, cuts):
        received.extend(decoder.feed(piece))
    assert received == sent
    assert decoder.buffered == 0


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=1, max_size=200))
def test_garbage_is_either_incomplete_or_a_protocol_error(garbage: bytes) -> None:
    decoder = FrameDecoder(max_payload=1024)
    error: ProtocolError | None = None
    try:
        decoded = decoder.feed(garbage)
    except ProtocolError as exc:
        error = exc
    if error is not None:
        assert str(error)
        # Once broken, always broken: the connection must be closed.
        with pytest.raises(ProtocolError):
            decoder.feed(b"")
        return
    for frame in decoded:
        assert isinstance(frame, JsonFrame)


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (HEADER.pack(3, 9) + b"abc", "unknown frame kind"),
        (HEADER.pack(MAX_PAYLOAD + 1, 1), "exceeds the limit"),
        (HEADER.pack(4, 1) + b"\xff\xfe{}", "not valid UTF-8 JSON"),
        (HEADER.pack(2, 1) + b"[]", "must hold an object"),
        (HEADER.pack(3, 1) + b"{x}", "not valid UTF-8 JSON"),
        # Output and input frames (kinds 2 and 3) are not part of the control wire.
        (HEADER.pack(9, 2) + b"\0" * 9, "unknown frame kind"),
        (HEADER.pack(3, 3) + b"abc", "unknown frame kind"),
    ],
)
def test_bad_frames_raise_a_clear_error(raw: bytes, reason: str) -> None:
    with pytest.raises(ProtocolError, match=reason):
        FrameDecoder().feed(raw)


def test_frames_before_a_bad_one_are_not_returned_as_partial_success() -> None:
    decoder = FrameDecoder()
    with pytest.raises(ProtocolError):
        decoder.feed(encode_json({"a": 1}) + HEADER.pack(1, 77) + b"x")


def test_the_size_limit_applies_before_the_payload_arrives() -> None:
    decoder = FrameDecoder(max_payload=16)
    with pytest.raises(ProtocolError, match="exceeds"):
        decoder.feed(HEADER.pack(17, 1))
