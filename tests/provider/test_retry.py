"""Back-off: exponential with jitter, at least the server's retry-after, bounded attempts."""

from __future__ import annotations

from desktop.provider import errors
from desktop.provider.errors import ProviderError
from desktop.provider.retry import MAX_RETRIES, retry_delay


def error(
    retryable: bool = True, retry_after: float | None = None, started: bool = False
) -> ProviderError:
    return ProviderError(
        errors.RATE_LIMITED,
        "x",
        retryable=retryable,
        retry_after=retry_after,
        output_started=started,
    )


def test_delay_doubles_per_attempt_within_its_jitter_band() -> None:
    low = [retry_delay(n, error(), rand=lambda: 0.0) for n in range(1, 5)]
    high = [retry_delay(n, error(), rand=lambda: 1.0) for n in range(1, 5)]
    assert low == [1.0, 2.0, 4.0, 8.0]
    assert high == [2.0, 4.0, 8.0, 16.0]


def test_retry_after_is_a_floor_not_a_replacement() -> None:
    assert retry_delay(1, error(retry_after=30.0), rand=lambda: 1.0) == 30.0
    assert retry_delay(4, error(retry_after=0.5), rand=lambda: 1.0) == 16.0


def test_no_retry_when_not_retryable_after_output_or_out_of_attempts() -> None:
    assert retry_delay(1, error(retryable=False)) is None
    assert retry_delay(1, error(started=True)) is None
    assert retry_delay(MAX_RETRIES + 1, error()) is None
    assert retry_delay(MAX_RETRIES, error()) is not None


def test_a_strict_400_from_the_client_is_never_retried() -> None:
    bad = errors.classify_http_error(400, {}, '{"error": {"message": "Invalid parameter"}}')
    assert all(retry_delay(n, bad) is None for n in range(1, MAX_RETRIES + 1))
