"""The UI shell opens offline after one online visit, and says it is offline."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.chromium import sign_in
from tests.support.service import Service, service_reachable
from tests.support.wait import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.persistent_profile]


def test_opens_offline_after_one_online_visit(page: Page, service: Service) -> None:
    sign_in(page, service)
    # The first visit becomes controlled (clientsClaim) and warms the asset cache.
    page.wait_for_function("() => window.__desk.state().controlled")
    page.wait_for_function("() => window.__desk.state().offlineReady")
    expect(page.locator("#offline-banner")).to_be_hidden()
    expect(page.get_by_role("status").filter(has_text="Connected")).to_be_visible()

    service.stop()
    wait_until(lambda: not service_reachable(service.url), what="service stopped")
    page.reload()

    # The shell rendered from the worker's copies: header, sidebar, scripts running.
    expect(page.locator(".app-name")).to_have_text("Desk")
    expect(page.get_by_role("navigation", name="Sessions")).to_be_visible()
    page.wait_for_function("() => window.__desk && window.__desk.state().connection === 'offline'")
    expect(page.locator("#offline-banner")).to_be_visible()
    expect(page.locator("#offline-banner")).to_contain_text("unreachable")
    expect(page.get_by_role("status").filter(has_text="Offline")).to_be_visible()

    # Back online: the banner goes away without a reload.
    service.start()
    page.wait_for_function("() => window.__desk.state().connection === 'connected'", timeout=15000)
    expect(page.locator("#offline-banner")).to_be_hidden()


def test_shows_how_to_sign_in_without_the_cookie(page: Page, service: Service) -> None:
    page.goto(service.url + "/")
    page.wait_for_function(
        "() => window.__desk && window.__desk.state().connection === 'unauthorized'"
    )
    banner = page.locator("#signin-banner")
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("?token=")
    expect(page.locator("#offline-banner")).to_be_hidden()
