"""The in-process service the route tests share: its fixed token and aiohttp's client factory."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp.test_utils import TestClient

TOKEN = "t" * 43  # the token the in-process app is created with
ClientFactory = Callable[..., Awaitable[TestClient]]
