"""What can go wrong talking to a provider, classified once: `ProviderError.retryable` is the
one owner of "is this worth sending again"."""

from __future__ import annotations

import email.utils
import json
import re
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
NOT_CONFIGURED_TEXT = (
    "No model provider is configured: set one in the settings (PUT /api/config/provider) "
    "and send the prompt again."
)
CONTEXT_OVERFLOW = "provider.context_overflow"
MODELS_UNAVAILABLE = "provider.models_unavailable"

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
        window: int | None = None,
        requested: int | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after  # seconds the server asked us to wait, if it did
        self.output_started = output_started
        self.code = code
        self.window = window  # a context overflow's stated window, in tokens
        self.requested = requested  # and the prompt size it counted

    @property
    def overflow(self) -> bool:
        return self.kind == CONTEXT_OVERFLOW

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
    if status in (400, 413, 422):
        facts = overflow_facts(body)
        if facts is not None:
            return ProviderError(
                CONTEXT_OVERFLOW,
                text,
                retryable=False,
                status=status,
                code=code,
                window=facts[0],
                requested=facts[1],
            )
    return ProviderError(
        kind, text, retryable=retryable, status=status, retry_after=delay, code=code
    )


_OVERFLOW_CODES = ("context_length_exceeded", "exceed_context_size_error")
_OVERFLOW_WORDS = re.compile(
    r"maximum context length|context size|prompt is too long|context window"
    r"|reduce the length of the messages|too many tokens",
    re.IGNORECASE,
)
# (pattern, group of the window, group of the prompt size) over the provider's message.
_STATED = (
    # OpenAI, DeepSeek, vLLM, OpenRouter.
    (re.compile(r"maximum context length is (\d+) tokens", re.I), 1, None),
    # Anthropic: "prompt is too long: 210000 tokens > 200000 maximum".
    (re.compile(r"prompt is too long: (\d+) tokens > (\d+)", re.I), 2, 1),
)
_REQUESTED = re.compile(r"(?:resulted in|you requested(?: about)?) (\d+) tokens", re.IGNORECASE)


def _error_object(body: str) -> dict[str, object]:
    """The error object of any provider's shape: `{"error": {...}}` or vLLM's top level."""
    try:
        parsed = json.loads(body)
    except ValueError:
        return {"message": body}
    if not isinstance(parsed, dict):
        return {"message": body}
    inner = parsed.get("error")
    if isinstance(inner, dict):
        return inner
    if isinstance(inner, str):
        return {"message": inner}
    return parsed


def _positive(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**40:
        return value
    return None


def overflow_facts(body: str) -> tuple[int | None, int | None] | None:
    """None unless the error body says the prompt did not fit the context window; then the
    window and the prompt size, each when stated. Decided by code, type and wording."""
    error = _error_object(body)
    message = str(error.get("message") or "")
    code = str(error.get("code") or "")
    kind = str(error.get("type") or "")
    if not (code in _OVERFLOW_CODES or kind in _OVERFLOW_CODES or _OVERFLOW_WORDS.search(message)):
        return None
    window = _positive(error.get("n_ctx"))
    requested = _positive(error.get("n_prompt_tokens"))
    for pattern, window_group, size_group in _STATED:
        found = pattern.search(message)
        if found is not None:
            window = window or int(found.group(window_group))
            if size_group is not None:
                requested = requested or int(found.group(size_group))
    found = _REQUESTED.search(message)
    if found is not None and requested is None:
        requested = int(found.group(1))
    return window, requested


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
    facts = None if output_started else overflow_facts(json.dumps({"error": error}))
    if facts is not None:
        return ProviderError(
            CONTEXT_OVERFLOW,
            f"Stream error: {message}",
            retryable=False,
            status=status,
            window=facts[0],
            requested=facts[1],
        )
    return ProviderError(
        STREAM_ERROR,
        f"Stream error: {message}",
        retryable=retryable,
        status=status,
        output_started=output_started,
        code=None if code is None else str(code),
    )
