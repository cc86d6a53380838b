"""Tab status as news, not history (issue 12, items 4 and 5): bells and output replayed after a
reload or in a second window mark nothing, a bell never marks the tab in view, and an exit
shows in the pane with Restart and Close."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from tests.browser.helpers import (
    Service,
    buffer_lines,
    terminal,
    terminals,
    type_line,
    wait_attached,
    wait_for_line,
    wait_for_status,
)
from tests.browser.tab_helpers import focus_terminal, open_ui, reload_and_attach, shot
from tests.browser.test_terminals import activate, create_terminal

pytestmark = pytest.mark.browser


def statuses(page: Page) -> dict[str, str]:
    return {t["id"]: t["status"] for t in terminals(page)}


def test_bells_mark_only_background_tabs_and_replayed_bells_mark_nothing(
    page: Page, browser: Browser, service: Service, tmp_path: Path
) -> None:
    shown = create_terminal(service, "shown")
    behind = create_terminal(service, "behind")
    open_ui(page, service, 2)
    for pty_id in (shown, behind):
        wait_attached(page, pty_id)

    # The background tab waits for a file, then rings.
    go = tmp_path / "go"
    activate(page, behind)
    focus_terminal(page, behind)
    type_line(page, f"while [ ! -e {go} ]; do sleep 0.05; done; printf 'rang\\a\\n'")
    activate(page, shown)
    focus_terminal(page, shown)
    go.touch()
    wait_for_status(page, behind, "bell")

    # A bell in the tab in view marks nothing (the echo after it comes later in the stream).
    type_line(page, "printf 'here\\a\\n'")
    wait_for_line(page, shown, "here")
    type_line(page, "echo after-$((1+1))")
    wait_for_line(page, shown, "after-2")
    assert terminal(page, shown)["status"] == "running"
    shot(page, "4-bell-in-background-tab")

    # After a reload both histories hold a bell: neither is news.
    reload_and_attach(page, shown)
    wait_attached(page, behind)
    wait_for_line(page, shown, "after-2")
    wait_for_line(page, behind, "rang")
    assert statuses(page) == {shown: "running", behind: "running"}
    shot(page, "4-after-reload-no-old-bells")

    # Nor in a second window, which opens as an observer of both.
    other = browser.new_context(viewport={"width": 1000, "height": 600}).new_page()
    open_ui(other, service, 2)
    for pty_id in (shown, behind):
        wait_attached(other, pty_id, "observer")
    wait_for_line(other, shown, "after-2")
    wait_for_line(other, behind, "rang")
    assert set(statuses(other).values()) == {"view-only"}
    assert "rang" in buffer_lines(other, behind)
