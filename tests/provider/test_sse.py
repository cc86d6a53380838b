"""SSE framing: line ends, split chunks, comments, multi-line data, bounds."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from desktop.provider.sse import SSEDecoder, SSEError, SSEEvent


def decode(*chunks: bytes, max_event_bytes: int = 1 << 20) -> list[SSEEvent]:
    decoder = SSEDecoder(max_event_bytes)
    events: list[SSEEvent] = []
    for chunk in chunks:
        events.extend(decoder.feed(chunk))
    events.extend(decoder.close())
    return events


def datas(*chunks: bytes) -> list[str]:
    return [event.data for event in decode(*chunks)]


@pytest.mark.parametrize("end", [b"\n", b"\r", b"\r\n"])
def test_each_line_ending_alone_frames_events(end: bytes) -> None:
    body = b"data: one" + end + end + b"data: two" + end + end
    assert datas(body) == ["one", "two"]


def test_mixed_line_endings_in_one_stream_frame_the_same_events() -> None:
    assert datas(b"data: a\r\n\ndata: b\r\rdata: c\n\r\n") == ["a", "b", "c"]


def test_cr_at_chunk_end_and_lf_in_next_chunk_are_one_line_end() -> None:
    # Were the CR and LF counted as two line ends, the blank line would dispatch "a" early
    # and "b" would be a separate event.
    assert datas(b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n") == ["a\nb"]


def test_lone_cr_at_chunk_end_is_a_line_end_on_its_own() -> None:
    assert datas(b"data: a\r", b"\r", b"data: b\n\n") == ["a", "b"]


def test_comments_are_skipped() -> None:
    assert datas(b": OPENROUTER PROCESSING\n\n:keep-alive\ndata: x\n: mid\n\n") == ["x"]


def test_multi_line_data_fields_join_with_lf() -> None:
    assert datas(b'data: {"a":\ndata:  1}\n\n') == ['{"a":\n 1}']


def test_only_one_space_after_the_colon_is_stripped_and_no_colon_means_empty_value() -> None:
    assert datas(b"data:  two\n\ndata\n\n") == [" two", ""]


def test_garbage_and_unknown_fields_are_ignored() -> None:
    assert datas(b"garbage line\nid: 7\nretry: 10\nfoo: bar\ndata: ok\n\n") == ["ok"]


def test_event_field_names_the_event() -> None:
    events = decode(b"event: error\ndata: {}\n\ndata: next\n\n")
    assert events == [SSEEvent("{}", "error"), SSEEvent("next", "message")]


def test_unterminated_last_event_is_dispatched_at_end_of_body() -> None:
    assert datas(b"data: a\n\ndata: [DONE]") == ["a", "[DONE]"]


def test_a_line_split_across_many_chunks_is_reassembled() -> None:
    assert datas(b"da", b"ta: hel", b"lo wor", b"ld\n", b"\n") == ["hello world"]


def test_an_endless_line_is_refused_once_past_the_bound() -> None:
    decoder = SSEDecoder(max_event_bytes=1000)
    decoder.feed(b"data: " + b"x" * 900)
    with pytest.raises(SSEError):
        decoder.feed(b"x" * 200)


def test_an_event_of_many_data_lines_is_bounded_too() -> None:
    decoder = SSEDecoder(max_event_bytes=1000)
    with pytest.raises(SSEError):
        decoder.feed(b"data: " + b"x" * 100 + b"\n" * 1 + (b"data: " + b"y" * 100 + b"\n") * 20)


def test_a_leading_byte_order_mark_is_dropped() -> None:
    assert datas(b"\xef\xbb\xbfdata: x\n\n") == ["x"]


def test_multibyte_characters_split_between_chunks_decode_whole() -> None:
    raw = "data: héllo ✓\n\n".encode()
    cut = raw.index("✓".encode()) + 1
    assert datas(raw[:cut], raw[cut:]) == ["héllo ✓"]


@given(
    st.lists(
        st.text(
            alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\r\n"),
            max_size=20,
        ),
        max_size=8,
    ),
    st.lists(st.sampled_from([b"\n", b"\r", b"\r\n"]), min_size=1),
    st.data(),
)
def test_any_split_of_any_line_ending_mix_frames_the_same_events(
    payloads: list[str], ends: list[bytes], data: st.DataObject
) -> None:
    body = b""
    for i, payload in enumerate(payloads):
        end = ends[i % len(ends)]
        body += b"data: " + payload.encode() + end + end
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=10)))
    chunks = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    assert datas(*chunks) == payloads
