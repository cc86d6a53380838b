"""Bars above the terminal never hide its bottom rows (issue 12, item 2): the search bar, the
offline banner with its notice, and the view-only bar each refit the terminal when they appear
and when they go, so the prompt stays visible."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.support.browser_tabs import focus_terminal, open_ui, pane_fit, shot, wait_fits
from tests.support.browser_terminals import (
    buffer_lines,
    create_shell,
    terminal,
    type_line,
    wait_attached,
    wait_for_line,
)
from tests.support.service import Service
from tests.support.wait import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.shared_service]


def fill_screen(page: Page, pty_id: str) -> None:
    focus_terminal(page, pty_id)
    type_line(page, "seq 1 200")
    wait_for_line(page, pty_id, "200")
    wait_until(lambda: buffer_lines(page, pty_id)[-1] == "$", what="prompt at the bottom")


def assert_prompt_visible(page: Page, pty_id: str) -> None:
    fit = pane_fit(page, pty_id)
    assert fit["screenBottom"] <= fit["paneBottom"] + 0.5, fit


def test_search_bar_refits_the_terminal_when_it_opens_and_closes(
    page: Page, service: Service
) -> None:
    pty_id = create_shell(service, "searched")
    open_ui(page, service, 1)
    wait_attached(page, pty_id)
    fill_screen(page, pty_id)
    before = wait_fits(page, pty_id, "fits before the bar")
    shot(page, "2-no-bar")

    page.keyboard.press("Control+Shift+F")
    expect(page.locator("#search-bar")).to_be_visible()
    opened = wait_fits(page, pty_id, "refit under the search bar")
    assert opened["rows"] < before["rows"]
    # The controller told the service the new size, so the shell redraws for it.
    wait_until(
        lambda: service.request("GET", f"/api/pty/{pty_id}")["size"]["rows"] == opened["rows"],
        what="service told",
    )
    assert_prompt_visible(page, pty_id)
    shot(page, "2-search-bar-open")

    page.keyboard.press("Escape")
    expect(page.locator("#search-bar")).to_be_hidden()
    closed = wait_fits(page, pty_id, "refit after the bar went")
    assert closed["rows"] == before["rows"]


@pytest.mark.fresh_service
def test_offline_banner_keeps_the_typed_line_visible(page: Page, service: Service) -> None:
    pty_id = create_shell(service, "offline")
    open_ui(page, service, 1)
    wait_attached(page, pty_id)
    fill_screen(page, pty_id)
    before = wait_fits(page, pty_id, "fits online")

    service.kill()
    expect(page.locator("#offline-banner")).to_be_visible()
    offline = wait_fits(page, pty_id, "refit under the banner")
    assert offline["rows"] < before["rows"]
    # The tab's socket belongs to the PTY host, so the shell still answers while the
    # service is down; what is typed shows on the last visible row.
    focus_terminal(page, pty_id)
    type_line(page, "echo typed-offline")
    wait_for_line(page, pty_id, "typed-offline")
    wait_until(lambda: buffer_lines(page, pty_id)[-1] == "$", what="prompt after the echo")
    assert_prompt_visible(page, pty_id)
    shot(page, "2-offline-banner")

    service.start()
    expect(page.locator("#offline-banner")).to_be_hidden()
    back = wait_fits(page, pty_id, "refit when the banner goes")
    assert back["rows"] == before["rows"]
    assert_prompt_visible(page, pty_id)


def test_view_only_bar_never_hides_the_observers_prompt(browser: Browser, service: Service) -> None:
    pty_id = create_shell(service, "watched")
    first = browser.new_context(viewport={"width": 1100, "height": 650}).new_page()
    open_ui(first, service, 1)
    wait_attached(first, pty_id, "controller")
    fill_screen(first, pty_id)
    # A smaller second window: it shows the controller's (larger) size under its bar.
    second = browser.new_context(viewport={"width": 900, "height": 500}).new_page()
    open_ui(second, service, 1)
    wait_attached(second, pty_id, "observer")
    expect(second.locator("#view-only-bar")).to_be_visible()
    wait_until(
        lambda: terminal(second, pty_id)["rows"] == terminal(first, pty_id)["rows"],
        what="observer follows the controller's size",
    )
    wait_until(lambda: buffer_lines(second, pty_id)[-1] == "$", what="observer shows the prompt")
    # Taller than its pane: the top rows give way, the prompt row stays in sight.
    fit = pane_fit(second, pty_id)
    assert fit["screenHeight"] > fit["paneHeight"], fit
    assert_prompt_visible(second, pty_id)
    shot(second, "2-view-only-bar")

    second.locator("#view-only-bar").get_by_role("button", name="Take control").click()
    wait_attached(second, pty_id, "controller")
    expect(second.locator("#view-only-bar")).to_be_hidden()
    expect(first.locator("#view-only-bar")).to_be_visible()
    wait_fits(second, pty_id, "the new controller fits its pane")
    wait_until(
        lambda: terminal(first, pty_id)["rows"] == terminal(second, pty_id)["rows"],
        what="the old controller follows the new size",
    )
    assert_prompt_visible(first, pty_id)
    shot(first, "2-view-only-bar-after-takeover")
