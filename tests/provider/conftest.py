"""A strict fake provider per test; it must never have seen an invalid request."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.support.fake_provider import FakeProvider


@pytest.fixture
async def fake() -> AsyncIterator[FakeProvider]:
    async with FakeProvider() as provider:
        yield provider
