"""Server-Sent Events framing for streamed chat completions: our own reader of the WHATWG
framing rules, with no Python loop over bytes."""

from __future__ import annotations

from dataclasses import dataclass

MAX_EVENT_BYTES = 8 * 1024 * 1024


class SSEError(Exception):
    """The byte stream broke the framing limits (an over-long line or event)."""


@dataclass(frozen=True, slots=True)
class SSEEvent:
    data: str
    event: str = "message"


class SSEDecoder:
    """Incremental decoder: `feed(chunk)` returns the events completed by that chunk.

    `max_event_bytes` bounds both the unterminated line kept between chunks and the data of
    one event, so a peer that never sends a newline cannot grow the buffer without limit.
    """

    __slots__ = (
        "_data",
        "_data_size",
        "_event",
        "_max",
        "_partial",
        "_partial_size",
        "_skip_lf",
        "_started",
    )

    def __init__(self, max_event_bytes: int = MAX_EVENT_BYTES) -> None:
        self._max = max_event_bytes
        self._partial: list[bytes] = []  # pieces of a line whose end has not arrived yet
        self._partial_size = 0
        self._skip_lf = False  # the previous chunk ended in CR: a leading LF belongs to it
        self._data: list[bytes] = []
        self._data_size = 0
        self._event = b""
        self._started = False

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        if not self._started and chunk:
            self._started = True
            if chunk.startswith(b"\xef\xbb\xbf"):  # the spec allows one leading BOM
                chunk = chunk[3:]
        if self._skip_lf and chunk[:1] == b"\n":
            chunk = chunk[1:]
        self._skip_lf = False
        if not chunk:
            return []
        if chunk.find(b"\n") < 0 and chunk.find(b"\r") < 0:
            self._partial.append(chunk)
            self._partial_size += len(chunk)
            if self._partial_size > self._max:
                raise SSEError(f"an SSE line exceeds {self._max} bytes")
            return []
        if self._partial:
            self._partial.append(chunk)
            chunk = b"".join(self._partial)
            self._partial.clear()
            self._partial_size = 0
        lines = chunk.splitlines()  # bytes.splitlines splits on exactly CR, LF and CRLF
        last = chunk[-1:]
        if last == b"\r":
            self._skip_lf = True
        elif last != b"\n":
            tail = lines.pop()
            self._partial.append(tail)
            self._partial_size = len(tail)
            if self._partial_size > self._max:
                raise SSEError(f"an SSE line exceeds {self._max} bytes")
        events: list[SSEEvent] = []
        data = self._data
        for line in lines:
            # Inlined fast paths for the two lines a chat stream is made of; every other
            # line (comments, `event:`, garbage) takes the general path.
            if not line:
                if data:
                    events.append(self._dispatch_data())
                else:
                    self._event = b""
            elif line.startswith(b"data:"):
                value = line[6:] if line[5:6] == b" " else line[5:]
                self._data_size += len(value) + 1
                if self._data_size > self._max:
                    raise SSEError(f"an SSE event exceeds {self._max} bytes")
                data.append(value)
            else:
                event = self._line(line)
                if event is not None:
                    events.append(event)
        return events

    def close(self) -> list[SSEEvent]:
        """End of body: an unterminated last line counts, an undispatched event does not.

        The spec drops an event without its blank line; chat servers that close right after
        `data: [DONE]` without one are common enough that the final event is dispatched.
        """
        events: list[SSEEvent] = []
        if self._partial:
            line = b"".join(self._partial)
            self._partial.clear()
            self._partial_size = 0
            event = self._line(line)
            if event is not None:
                events.append(event)
        event = self._dispatch()
        if event is not None:
            events.append(event)
        return events

    def _line(self, line: bytes) -> SSEEvent | None:
        if not line:
            return self._dispatch()
        if line[:1] == b":":
            return None
        name, sep, value = line.partition(b":")
        if sep and value[:1] == b" ":
            value = value[1:]
        if name == b"data":
            self._data_size += len(value) + 1
            if self._data_size > self._max:
                raise SSEError(f"an SSE event exceeds {self._max} bytes")
            self._data.append(value)
        elif name == b"event":
            self._event = value
        # `id`, `retry` and unknown fields (garbage lines included) are ignored, per spec.
        return None

    def _dispatch(self) -> SSEEvent | None:
        if not self._data:
            self._event = b""
            return None
        return self._dispatch_data()

    def _dispatch_data(self) -> SSEEvent:
        lines = self._data
        raw = lines[0] if len(lines) == 1 else b"\n".join(lines)
        data = raw.decode("utf-8", errors="replace")
        event = self._event.decode("utf-8", errors="replace") if self._event else "message"
        self._data.clear()
        self._data_size = 0
        self._event = b""
        return SSEEvent(data, event)
