"""Chunk sequences to typed events: text, reasoning, tool calls, usage, finish, failures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop.provider import errors
from desktop.provider.errors import ProviderError
from desktop.provider.stream import (
    Finish,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolCallStarted,
    Usage,
    parse_stream,
)

FIXTURES = Path(__file__).parent / "fixtures"
RECORDINGS = sorted(FIXTURES.glob("groq-chat-*.json"))


def sse(payload: object) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def delta(d: dict[str, Any], finish: str | None = None) -> bytes:
    return sse({"choices": [{"index": 0, "delta": d, "finish_reason": finish}]})


def summary(events: list[StreamEvent]) -> dict[str, Any]:
    calls = [e for e in events if isinstance(e, ToolCall)]
    usage = [e for e in events if isinstance(e, Usage)]
    finish = [e for e in events if isinstance(e, Finish)]
    return {
        "text": "".join(e.text for e in events if isinstance(e, TextDelta)),
        "reasoning": "".join(e.text for e in events if isinstance(e, ReasoningDelta)),
        "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls],
        "usage": None
        if not usage
        else {
            "prompt_tokens": usage[-1].prompt_tokens,
            "completion_tokens": usage[-1].completion_tokens,
            "total_tokens": usage[-1].total_tokens,
            "reasoning_tokens": usage[-1].reasoning_tokens,
        },
        "finish": finish[-1].reason if finish else None,
        "usage_events": len(usage),
    }


def test_tool_call_arguments_split_across_chunks_are_assembled_by_index() -> None:
    events = parse_stream(
        [
            delta({"role": "assistant", "content": None}),
            delta(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_a",
                            "type": "function",
                            "function": {"name": "read", "arguments": ""},
                        }
                    ]
                }
            ),
            delta(
                {
                    "tool_calls": [
                        {
                            "index": 1,
                            "id": "call_b",
                            "type": "function",
                            "function": {"name": "glob", "arguments": '{"pat'},
                        }
                    ]
                }
            ),
            delta({"tool_calls": [{"index": 0, "function": {"arguments": '{"path"'}}]}),
            delta({"tool_calls": [{"index": 1, "function": {"arguments": 'tern": "*"}'}}]}),
            delta({"tool_calls": [{"index": 0, "function": {"arguments": ': "a"}'}}]}),
            delta({}, "tool_calls"),
            b"data: [DONE]\n\n",
        ]
    )
    assert [e for e in events if isinstance(e, ToolCall)] == [
        ToolCall(0, "call_a", "read", '{"path": "a"}'),
        ToolCall(1, "call_b", "glob", '{"pattern": "*"}'),
    ]
    assert events[0] == ToolCallStarted(0, "call_a", "read")
    assert ToolCallDelta(0, ': "a"}') in events
    assert events[-1] == Finish("tool_calls")


def test_whole_tool_calls_without_index_and_without_id_still_get_an_id() -> None:
    events = parse_stream(
        [
            delta(
                {
                    "tool_calls": [
                        {"function": {"name": "read", "arguments": "{}"}},
                        {"function": {"name": "glob", "arguments": "{}"}},
                    ]
                },
                "tool_calls",
            )
        ]
    )
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert [c.name for c in calls] == ["read", "glob"]
    assert all(c.id.startswith("call_") for c in calls)
    assert calls[0].id != calls[1].id


@pytest.mark.parametrize("field", ["reasoning", "reasoning_content"])
def test_reasoning_deltas_from_either_field_are_reasoning(field: str) -> None:
    events = parse_stream(
        [delta({field: "hmm "}), delta({field: "ok"}), delta({"content": "answer"}, "stop")]
    )
    assert events[:3] == [ReasoningDelta("hmm "), ReasoningDelta("ok"), TextDelta("answer")]


def test_usage_only_final_chunk_is_the_usage_and_comes_before_finish() -> None:
    events = parse_stream(
        [
            delta({"content": "hi"}),
            delta({}, "stop"),
            sse(
                {
                    "choices": [],
                    "usage": {
                        "prompt_tokens": 5,
                        "completion_tokens": 2,
                        "total_tokens": 7,
                        "prompt_tokens_details": {"cached_tokens": 3},
                        "cost": 0.0012,
                    },
                }
            ),
            b"data: [DONE]\n\n",
        ]
    )
    assert events[-2:] == [Usage(5, 2, 7, 0, 3, 0.0012), Finish("stop")]


def test_missing_done_after_a_finish_reason_is_a_complete_answer() -> None:
    events = parse_stream([delta({"content": "hi"}), delta({}, "stop")])
    assert events == [TextDelta("hi"), Finish("stop")]


def test_end_of_body_without_done_or_finish_after_output_is_a_cut_not_an_answer() -> None:
    with pytest.raises(ProviderError) as caught:
        parse_stream([delta({"content": "half an ans"})])
    assert caught.value.kind == errors.STREAM_CUT
    assert caught.value.output_started
    assert not caught.value.retryable


def test_empty_body_is_a_retryable_connection_failure() -> None:
    with pytest.raises(ProviderError) as caught:
        parse_stream([b""])
    assert caught.value.kind == errors.CONNECTION
    assert caught.value.retryable


def test_garbage_lines_and_comments_around_chunks_are_ignored() -> None:
    events = parse_stream(
        [
            b": OPENROUTER PROCESSING\n\nnot a field\n",
            b"\xff\xfe junk\n\n",
            delta({"content": "ok"}, "stop"),
            b"data: [DONE]\n\n",
        ]
    )
    assert events == [TextDelta("ok"), Finish("stop")]


def test_anything_after_done_is_ignored() -> None:
    events = parse_stream([delta({"content": "ok"}), b"data: [DONE]\n\n", b"data: {broken\n\n"])
    assert events == [TextDelta("ok"), Finish("stop")]


def test_data_that_is_not_json_is_invalid_output() -> None:
    with pytest.raises(ProviderError) as caught:
        parse_stream([b"data: {half\n\n"])
    assert caught.value.kind == errors.INVALID_OUTPUT
    assert not caught.value.retryable


def test_error_object_mid_stream_is_an_error_after_the_text_before_it() -> None:
    body = [
        delta({"content": "par"}),
        sse({"error": {"message": "Provider returned error", "code": 502}}),
    ]
    with pytest.raises(ProviderError) as caught:
        parse_stream(body)
    assert caught.value.kind == errors.STREAM_ERROR
    assert caught.value.retryable
    assert caught.value.output_started
    assert "Provider returned error" in caught.value.message


def test_error_event_type_is_an_error_even_without_an_error_key() -> None:
    with pytest.raises(ProviderError) as caught:
        parse_stream([b'event: error\ndata: {"message": "bad request", "code": 400}\n\n'])
    assert caught.value.kind == errors.STREAM_ERROR
    assert not caught.value.retryable


def test_crlf_framed_stream_parses_like_lf_framed() -> None:
    lf = [delta({"content": "a"}), delta({"content": "b"}, "stop"), b"data: [DONE]\n\n"]
    crlf = [chunk.replace(b"\n", b"\r\n") for chunk in lf]
    cr = [chunk.replace(b"\n", b"\r") for chunk in lf]
    assert parse_stream(lf) == parse_stream(crlf) == parse_stream(cr)


def load(path: Path) -> tuple[bytes, dict[str, Any]]:
    fixture = json.loads(path.read_text(encoding="utf-8"))
    return fixture["response"]["body"].encode(), fixture["expected"]


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.stem)
def test_recorded_groq_stream_parses_to_its_expected_answer(path: Path) -> None:
    body, expected = load(path)
    got = summary(parse_stream([body]))
    assert got.pop("usage_events") == 1  # Groq repeats usage; it is reported once
    assert got == expected


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.stem)
def test_recorded_groq_stream_split_at_every_single_byte_boundary_parses_the_same(
    path: Path,
) -> None:
    body, _ = load(path)
    whole = parse_stream([body])  # recorded calls carry ids: no generated id differs
    for cut in range(len(body) + 1):
        assert parse_stream([body[:cut], body[cut:]]) == whole


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_recorded_groq_streams_resplit_anywhere_by_hypothesis_parse_the_same(
    data: st.DataObject,
) -> None:
    path = data.draw(st.sampled_from(RECORDINGS))
    body, _ = load(path)
    if data.draw(st.booleans()):
        body = body.replace(b"\n", data.draw(st.sampled_from([b"\r\n", b"\r"])))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=40)))
    chunks = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    assert parse_stream(chunks) == parse_stream([load(path)[0]])


def test_recorded_stream_one_byte_per_chunk_parses_the_same() -> None:
    body, _ = load(RECORDINGS[0])
    assert parse_stream([body[i : i + 1] for i in range(len(body))]) == parse_stream([body])
