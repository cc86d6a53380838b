"""The hot-path JSON codec gives what the standard library gives, corners included."""

from __future__ import annotations

import json
import math

import pytest

from desktop.jsoncodec import dumps, loads


@pytest.mark.parametrize(
    "value",
    [{"delta": "héllo ✓ \u2028"}, [1, 2.5, None, True], {"big": 2**70}, {"n": -(2**64)}, "x"],
)
def test_dumps_round_trips_through_the_standard_parser(value: object) -> None:
    assert json.loads(dumps(value)) == value


def test_loads_accepts_what_json_accepts_beyond_orjson() -> None:
    assert math.isnan(loads('{"x": NaN}')["x"])
    assert loads(b'{"a": "\\u00e9"}') == {"a": "é"}


@pytest.mark.parametrize("text", ["", "{", "garbage", '{"a": 1,}'])
def test_loads_refuses_what_is_not_json_with_a_value_error(text: str) -> None:
    with pytest.raises(ValueError, match=r"\w"):  # any message
        loads(text)
