"""A list of terminals is a snapshot of when it was asked for: tabs opened or closed in this
window while it was on its way keep what the user did (the tunnel test once lost a new tab
to the first list, which had been taken before the click)."""

from __future__ import annotations

import pytest
from playwright.sync_api import APIResponse, Page, Route, expect

from tests.support.browser_terminals import create_shell, terminals, wait_attached
from tests.support.chromium import sign_in
from tests.support.service import Service
from tests.support.wait import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.shared_service]


def hold_terminal_lists(page: Page) -> list[tuple[Route, APIResponse]]:
    """From now on every GET /api/pty is answered by the service at once but handed to the
    page only on `release`: a list taken before a change arrives after it."""
    held: list[tuple[Route, APIResponse]] = []

    def hold(route: Route) -> None:
        if route.request.method != "GET":
            route.continue_()
            return
        held.append((route, route.fetch()))

    page.route("**/api/pty", hold)
    return held


def wait_held(page: Page, held: list[tuple[Route, APIResponse]]) -> None:
    # Each call to the page lets Playwright run the route handler.
    wait_until(lambda: page.evaluate("1") and held, what="a terminal list")


def release(page: Page, held: list[tuple[Route, APIResponse]]) -> None:
    for route, response in held:
        route.fulfill(response=response)
    held.clear()
    page.unroute("**/api/pty")


def test_a_tab_opened_while_the_first_list_loads_is_kept(page: Page, service: Service) -> None:
    held = hold_terminal_lists(page)
    page.goto(f"{service.url}/?token={service.token}")
    wait_held(page, held)
    page.get_by_role("button", name="New terminal").click()
    expect(page.get_by_role("tab")).to_have_count(1)
    release(page, held)  # the list, taken before the click, names no terminal
    page.wait_for_function("() => window.__desk.state().loaded")
    expect(page.get_by_role("tab")).to_have_count(1)
    [tab] = terminals(page)
    wait_attached(page, tab["id"])
    assert [info["id"] for info in service.request("GET", "/api/pty")] == [tab["id"]]


def test_a_tab_closed_while_a_list_loads_is_not_brought_back(page: Page, service: Service) -> None:
    kept = create_shell(service, "kept")
    closed = create_shell(service, "closed")
    sign_in(page, service)
    page.wait_for_function("() => window.__desk.terminals().length === 2")
    synced = page.evaluate("() => window.__desk.state().synced")
    # A reconnect asks for the list again; it is taken while both terminals still run.
    held = hold_terminal_lists(page)
    page.evaluate("() => { window.__desk.resync() }")
    wait_held(page, held)
    page.locator(f'.tab[data-id="{closed}"] .tab-close').click()
    expect(page.get_by_role("tab")).to_have_count(1)
    # Not even for a moment: a tab brought back would attach, find nothing and go again.
    page.evaluate(
        """() => {
          window.__reappeared = false
          const back = () => document.querySelector('[role=tab][aria-label^="closed,"]')
          new MutationObserver(() => {
            if (back()) window.__reappeared = true
          }).observe(document.body, { childList: true, subtree: true, attributes: true })
        }"""
    )
    release(page, held)
    page.wait_for_function("(n) => window.__desk.state().synced > n", arg=synced)
    expect(page.get_by_role("tab")).to_have_count(1)
    assert [info["id"] for info in terminals(page)] == [kept]
    assert page.evaluate("() => window.__reappeared") is False
    assert closed not in [info["id"] for info in service.request("GET", "/api/pty")]
