"""The streaming chat-completions client: one POST, its SSE body as typed events.

It preflights every body (`validate.validate_request`) and refuses to send a violating
one, reads the body with `iter_any()` through our own SSE decoder, and turns every failure
into a classified `ProviderError` (see `errors`). It never logs or echoes the key.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import aiohttp

from desktop.provider.errors import (
    CONNECTION,
    STREAM_CUT,
    TIMEOUT,
    ProviderError,
    classify_http_error,
)
from desktop.provider.profiles import Profile, ToolSpec, build_body
from desktop.provider.sse import MAX_EVENT_BYTES
from desktop.provider.stream import StreamEvent, StreamParser
from desktop.provider.validate import validate_request

log = logging.getLogger("desk.provider")

DEFAULT_READ_TIMEOUT = 120.0  # seconds without a byte: reasoning models pause long
DEFAULT_CONNECT_TIMEOUT = 20.0
ERROR_BODY_LIMIT = 64 * 1024


class ChatClient:
    """Streams completions for one profile. Give it a session to share a connection pool;
    without one it owns a session and `close()` ends it."""

    def __init__(
        self,
        profile: Profile,
        *,
        session: aiohttp.ClientSession | None = None,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        max_event_bytes: int = MAX_EVENT_BYTES,
    ) -> None:
        self.profile = profile
        self._session = session
        self._owns_session = session is None
        self._timeout = aiohttp.ClientTimeout(
            total=None, connect=connect_timeout, sock_read=read_timeout
        )
        self._max_event_bytes = max_event_bytes

    async def close(self) -> None:
        if self._owns_session and self._session is not None:
            await self._session.close()
            self._session = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession()
        return self._session

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if self.profile.api_key:
            headers["Authorization"] = f"Bearer {self.profile.api_key}"
        return headers

    def build(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> dict[str, Any]:
        """The body `stream` would send, preflighted (raises PreflightError)."""
        body = build_body(
            self.profile, messages, tools=tools, max_tokens=max_tokens, temperature=temperature
        )
        validate_request(body, mistral=self.profile.mistral)
        return body

    async def stream(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> AsyncIterator[StreamEvent]:
        body = self.build(messages, tools=tools, max_tokens=max_tokens, temperature=temperature)
        async for event in self.stream_body(body):
            yield event

    async def stream_body(self, body: Mapping[str, Any]) -> AsyncIterator[StreamEvent]:
        """Send an already built body (preflighted again: no path skips the check)."""
        validate_request(body, mistral=self.profile.mistral)
        parser = StreamParser(self._max_event_bytes)
        try:
            async with self._client().post(
                self.profile.endpoint,
                json=body,
                headers=self._headers(),
                timeout=self._timeout,
                allow_redirects=False,  # a redirect must not carry the key elsewhere
            ) as response:
                if response.status >= 300:
                    raw = await response.content.read(ERROR_BODY_LIMIT)
                    text = raw.decode("utf-8", errors="replace")
                    if self.profile.api_key:
                        # Some providers echo the key they rejected; it must not reach a log.
                        text = text.replace(self.profile.api_key, "[redacted]")
                    error = classify_http_error(response.status, dict(response.headers), text)
                    log.warning("provider %s answered %s", self.profile.provider, error.message)
                    raise error
                async for chunk in response.content.iter_any():
                    for event in parser.feed(chunk):
                        yield event
                    if parser.done:
                        break
                for event in parser.close():
                    yield event
        except ProviderError:
            raise
        except (TimeoutError, aiohttp.ServerTimeoutError) as exc:
            started = parser.output_started
            raise ProviderError(
                TIMEOUT,
                "The provider stopped sending (read timeout)"
                + (" after partial output." if started else "."),
                retryable=not started,
                output_started=started,
            ) from exc
        except aiohttp.ClientError as exc:
            started = parser.output_started
            raise ProviderError(
                STREAM_CUT if started else CONNECTION,
                f"Connection to the provider failed: {exc.__class__.__name__}"
                + (" after partial output." if started else "."),
                retryable=not started,
                output_started=started,
            ) from exc


async def collect(events: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    """Every event of a stream, for tests and tools that do not need them live."""
    return [event async for event in events]
