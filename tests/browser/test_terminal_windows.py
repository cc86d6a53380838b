"""Two windows on the same terminals (issue 12, item 7): one view-only bar, never a second
notice stacked under it, and a new window opens on the tab the other window shows."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, expect

from tests.support.browser_tabs import focus_terminal, open_ui, shot
from tests.support.browser_terminals import (
    activate,
    create_shell,
    terminal,
    type_line,
    wait_attached,
)
from tests.support.service import Service
from tests.support.wait import wait_until

pytestmark = pytest.mark.browser


def test_second_window_opens_on_the_shown_tab_with_one_view_only_bar(
    browser: Browser, service: Service
) -> None:
    first_tab = create_shell(service, "first")
    shown = create_shell(service, "shown")
    one = browser.new_context(viewport={"width": 1100, "height": 650}).new_page()
    open_ui(one, service, 2)
    wait_attached(one, first_tab)
    wait_attached(one, shown)
    assert terminal(one, first_tab)["active"]
    activate(one, shown)
    wait_until(
        lambda: service.request("GET", "/api/ui/prefs/terminal-active")["value"] == shown,
        what="the shown tab is shared",
    )

    two = browser.new_context(viewport={"width": 1100, "height": 650}).new_page()
    open_ui(two, service, 2)
    wait_attached(two, shown, "observer")
    assert terminal(two, shown)["active"], "opens on the tab the other window shows"

    bar = two.locator("#view-only-bar")
    expect(bar).to_be_visible()
    focus_terminal(two, shown)
    type_line(two, "echo ignored")
    expect(bar).to_have_class(re.compile(r"\bnudge\b"))
    expect(two.locator("#terminal-notice")).to_be_hidden()
    box = bar.bounding_box()
    assert box is not None
    assert box["height"] <= 40, box
    shot(two, "7-one-view-only-bar")

    # The first window's own choice survives its reload; it does not follow the second.
    activate(two, first_tab)
    one.reload()
    one.wait_for_function("() => window.__desk && window.__desk.state().loaded")
    wait_until(lambda: terminal(one, shown)["active"], what="the reloaded window keeps its tab")
