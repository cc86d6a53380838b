"""The page's test hooks (window.__desk) are a chunk of their own that a page loads only when
its service runs with DESK_TEST_HOOKS=1: a person's page never has them."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.service import Service

pytestmark = pytest.mark.browser


@pytest.fixture(autouse=True)
def page_test_hooks(monkeypatch: pytest.MonkeyPatch) -> None:
    """This module's services run as a person's does: without test hooks."""
    monkeypatch.delenv("DESK_TEST_HOOKS", raising=False)


def test_a_page_whose_service_has_no_test_hooks_never_loads_them(
    page: Page, service: Service
) -> None:
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(f"{service.url}/?token={service.token}")
    # Up and running: connected, and the terminal list loaded (the empty area says so).
    expect(page.locator("#connection")).to_have_attribute("data-state", "connected")
    expect(page.locator("#empty-terminals")).to_be_visible()
    assert page.locator('meta[name="desk-test-hooks"]').count() == 0
    assert page.evaluate("() => typeof window.__desk") == "undefined"
    assert [url for url in requested if "/_assets/test-hooks" in url] == []
    # The page did load its chunks: the claim is about this one.
    assert [url for url in requested if "/_assets/index-" in url]
