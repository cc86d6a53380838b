"""Error classification and retry-after parsing."""

from __future__ import annotations

import email.utils

import pytest

from desktop.provider import errors
from desktop.provider.errors import classify_http_error, classify_stream_error, parse_retry_after

OPENAI_400 = (
    '{"error": {"message": "Invalid parameter: messages with role \'tool\' must be a response '
    'to a preceeding message with \'tool_calls\'.", "type": "invalid_request_error", '
    '"param": "messages.[2].role", "code": null}}'
)


@pytest.mark.parametrize(
    ("status", "kind", "retryable"),
    [
        (429, errors.RATE_LIMITED, True),
        (500, errors.SERVER_ERROR, True),
        (502, errors.SERVER_ERROR, True),
        (503, errors.SERVER_ERROR, True),
        (529, errors.SERVER_ERROR, True),
        (408, errors.HTTP_ERROR, True),
        (400, errors.BAD_REQUEST, False),
        (422, errors.BAD_REQUEST, False),
        (401, errors.AUTH, False),
        (403, errors.AUTH, False),
        (404, errors.NOT_FOUND, False),
        (418, errors.HTTP_ERROR, False),
    ],
)
def test_http_status_decides_kind_and_retryability(status: int, kind: str, retryable: bool) -> None:
    error = classify_http_error(status, {}, "{}")
    assert (error.kind, error.retryable, error.status) == (kind, retryable, status)


def test_strict_400_is_not_retryable_and_carries_the_providers_message() -> None:
    error = classify_http_error(400, {}, OPENAI_400)
    assert not error.retryable
    assert "must be a response to a preceeding message" in error.message


def test_x_should_retry_header_overrides_the_status_rule() -> None:
    assert not classify_http_error(500, {"x-should-retry": "false"}, "").retryable
    assert classify_http_error(400, {"X-Should-Retry": "true"}, "").retryable


def test_429_carries_the_retry_after_delay() -> None:
    error = classify_http_error(429, {"Retry-After": "7"}, "")
    assert error.retry_after == 7.0
    assert error.retryable


def test_retry_after_seconds_fraction_and_ms() -> None:
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after": "1.5"}) == 1.5
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25


def test_retry_after_ms_wins_over_retry_after() -> None:
    assert parse_retry_after({"retry-after": "30", "retry-after-ms": "1200"}) == 1.2


def test_retry_after_http_date_is_seconds_from_now() -> None:
    now = 1_800_000_000.0
    date = email.utils.formatdate(now + 42, usegmt=True)
    assert parse_retry_after({"Retry-After": date}, now=now) == pytest.approx(42.0)
    past = email.utils.formatdate(now - 42, usegmt=True)
    assert parse_retry_after({"Retry-After": past}, now=now) == 0.0


@pytest.mark.parametrize("raw", ["soon", "-1", "nan", "inf", ""])
def test_unusable_retry_after_counts_as_absent(raw: str) -> None:
    assert parse_retry_after({"retry-after": raw}) is None


def test_bad_retry_after_ms_falls_back_to_retry_after() -> None:
    assert parse_retry_after({"retry-after-ms": "x", "retry-after": "2"}) == 2.0


def test_huge_retry_after_is_capped() -> None:
    assert parse_retry_after({"retry-after": "99999999"}) == errors.MAX_RETRY_AFTER_SECONDS


def test_no_retry_after_header_is_none() -> None:
    assert parse_retry_after({}) is None
    assert classify_http_error(503, {}, "").retry_after is None


def test_mid_stream_error_is_retryable_only_for_server_side_codes() -> None:
    assert classify_stream_error({"message": "m", "code": 502}, output_started=False).retryable
    assert classify_stream_error({"message": "m", "code": "429"}, output_started=False).retryable
    assert classify_stream_error({"type": "server_error"}, output_started=True).retryable
    assert not classify_stream_error({"message": "m", "code": 400}, output_started=False).retryable
    assert not classify_stream_error("just text", output_started=False).retryable
