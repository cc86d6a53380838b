"""JSON on the hot paths: orjson where it can, the standard library where it cannot.

Every streamed token crosses two JSON steps in the service: the provider's chunk is parsed
and the page's delta event is encoded. With the standard library those two cost about as
much as everything else a delta does (measured in bench/runner.py's profile: ~9 µs to
parse a 200-byte chunk, ~10 µs to encode a delta event; orjson ~3 µs and ~0.5 µs). orjson
refuses what the standard library accepts in two corners: encoding integers beyond 64 bits
and parsing NaN/Infinity; those fall back to `json`. One difference stays: orjson parses an
integer beyond 64 bits as a float. `loads` is for provider chunk envelopes, whose numbers are
token counts and indices (tool arguments arrive as a string inside and are parsed elsewhere).
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def loads(data: str | bytes) -> Any:
    """Parse JSON text; raises ValueError (as `json.loads` does) when it is not JSON."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)  # the corners orjson refuses; still ValueError when not JSON


def dumps(value: object) -> bytes:
    """Compact UTF-8 JSON of plain data (str keys), as bytes."""
    try:
        return orjson.dumps(value)
    except TypeError:  # an integer beyond 64 bits, or a non-str key
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
