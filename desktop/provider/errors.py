"""What can go wrong talking to a provider, classified once for the runner's retry policy.

One owner for the rule "is this worth sending again": `ProviderError.retryable`. Retryable
means the same body may succeed later (429, 408/409, 5xx, a connection lost or timed out
before any output, a server error reported inside the stream). A stream cut after output
is not retryable as such (resending would duplicate what was shown); `output_started`
tells the runner to continue from the partial answer instead. Anything else, a 400 in
particular, must never be resent with the same body.
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Mapping

# Error kinds (the `kind` of a ProviderError); the runner maps them to session errors.
RATE_LIMITED = "provider.rate_limited"
SERVER_ERROR = "provider.server_error"
AUTH = "provider.auth"
BAD_REQUEST = "provider.bad_request"
NOT_FOUND = "provider.not_found"
HTTP_ERROR = "provider.http_error"
CONNECTION = "provider.connection"
TIMEOUT = "provider.timeout"
STREAM_CUT = "provider.stream_cut"
STREAM_ERROR = "provider.stream_error"
INVALID_OUTPUT = "provider.invalid_output"
NOT_CONFIGURED = "provider.not_configured"

# Upper bound on a server-provided delay: a bogus `retry-after: 99999999` must not park a
# session for years. The runner's back-off applies its own cap on top.
MAX_RETRY_AFTER_SECONDS = 3600.0


class ProviderError(Exception):
    """A failed model call. `message` is safe to show and log: it never holds the key."""

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        retryable: bool,
        status: int | None = None,
        retry_after: float | None = None,
        output_started: bool = False,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after  # seconds the server asked us to wait, if it did
        self.output_started = output_started
        self.code = code

    def __repr__(self) -> str:
        return (
            f"ProviderError({self.kind!r}, {self.message!r}, retryable={self.retryable}, "
            f"status={self.status}, retry_after={self.retry_after})"
        )


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms` (preferred, OpenAI) or `retry-after`.

    `retry-after` is either delta-seconds or an HTTP date. Negative, non-finite or
    unparseable values count as absent; large ones are capped.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    raw_ms = lowered.get("retry-after-ms")
    if raw_ms is not None:
        value = _number(raw_ms)
        if value is not None:
            return min(value / 1000.0, MAX_RETRY_AFTER_SECONDS)
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    value = _number(raw)
    if value is not None:
        return min(value, MAX_RETRY_AFTER_SECONDS)
    try:
        when = email.utils.parsedate_to_datetime(raw.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    delay = when.timestamp() - (time.time() if now is None else now)
    return min(max(delay, 0.0), MAX_RETRY_AFTER_SECONDS)


def _number(raw: str) -> float | None:
    try:
        value = float(raw.strip())
    except ValueError:
        return None
    if value != value or value < 0 or value == float("inf"):
        return None
    return value


def _error_message(body: str) -> tuple[str, str | None]:
    """The provider's own message (and code) from an OpenAI-shaped error body, if any."""
    try:
        parsed = json.loads(body)
    except ValueError:
        return body.strip()[:500], None
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if isinstance(error, dict):
        message = error.get("message")
        code = error.get("code") if error.get("code") is not None else error.get("type")
        return (
            str(message) if message else json.dumps(error)[:500],
            None if code is None else str(code),
        )
    if isinstance(error, str):
        return error[:500], None
    return body.strip()[:500], None


def _should_retry_override(headers: Mapping[str, str]) -> bool | None:
    lowered = {k.lower(): v for k, v in headers.items()}
    value = lowered.get("x-should-retry", "").strip().lower()
    return True if value == "true" else False if value == "false" else None


def classify_http_error(status: int, headers: Mapping[str, str], body: str) -> ProviderError:
    """The ProviderError for a non-2xx answer to the request."""
    message, code = _error_message(body)
    text = f"HTTP {status}: {message}" if message else f"HTTP {status}"
    delay = parse_retry_after(headers)
    if status == 429:
        kind, retryable = RATE_LIMITED, True
    elif status >= 500:
        kind, retryable = SERVER_ERROR, True
    elif status in (408, 409):
        kind, retryable = HTTP_ERROR, True
    elif status in (401, 403):
        kind, retryable = AUTH, False
    elif status == 404:
        kind, retryable = NOT_FOUND, False
    elif status in (400, 413, 422):
        kind, retryable = BAD_REQUEST, False
    else:
        kind, retryable = HTTP_ERROR, False
    override = _should_retry_override(headers)
    if override is not None:
        retryable = override
    return ProviderError(
        kind, text, retryable=retryable, status=status, retry_after=delay, code=code
    )


def classify_stream_error(error: object, *, output_started: bool) -> ProviderError:
    """An `{"error": ...}` object that arrived inside a 200 stream (OpenRouter, vLLM do this).

    Its numeric `code` (or `status`), when present, is read as an HTTP status; a server-side
    failure is retryable, anything else is not.
    """
    message = "the provider reported an error mid-stream"
    code: object = None
    kind_hint = ""
    if isinstance(error, dict):
        message = str(error.get("message") or message)
        code = error.get("code", error.get("status"))
        kind_hint = str(error.get("type") or "")
    elif isinstance(error, str):
        message = error
    status = code if isinstance(code, int) and 100 <= code <= 599 else None
    if isinstance(code, str) and code.isdigit():
        status = int(code)
    retryable = (status is not None and (status == 429 or status >= 500)) or kind_hint in (
        "server_error",
        "overloaded_error",
        "rate_limit_error",
    )
    return ProviderError(
        STREAM_ERROR,
        f"Stream error: {message}",
        retryable=retryable,
        status=status,
        output_started=output_started,
        code=None if code is None else str(code),
    )
