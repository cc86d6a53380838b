"""JSON on the hot paths (a provider chunk parsed, an event frame encoded): orjson where it can,
the standard library for the corners orjson refuses.
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
