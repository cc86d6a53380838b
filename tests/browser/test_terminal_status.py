"""Tab status as news, not history (issue 12, items 4 and 5): bells and output replayed after a
reload or in a second window mark nothing, a bell never marks the tab in view, and an exit
shows in the pane with Restart and Close."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from tests.support.browser_tabs import focus_terminal, open_shells, open_ui, reload_and_attach, shot
from tests.support.browser_terminals import (
    activate,
    buffer_lines,
    create_shell,
    terminal,
    terminals,
    type_line,
    wait_attached,
    wait_for_line,
    wait_for_status,
)
from tests.support.service import Service
from tests.support.wait import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.shared_service]


def statuses(page: Page) -> dict[str, str]:
    return {t["id"]: t["status"] for t in terminals(page)}


def test_bells_mark_only_background_tabs_and_replayed_bells_mark_nothing(
    page: Page, browser: Browser, service: Service, tmp_path: Path
) -> None:
    shown = create_shell(service, "shown")
    behind = create_shell(service, "behind")
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


def exit_line(page: Page, pty_id: str) -> Locator:
    return page.locator(f"#pane-{pty_id} .pane-exit")


def test_exit_shows_in_the_pane_with_restart_and_close(page: Page, service: Service) -> None:
    failing = create_shell(service, "failing")
    other = create_shell(service, "other")
    open_ui(page, service, 2)
    wait_attached(page, failing)
    wait_attached(page, other)
    activate(page, failing)
    focus_terminal(page, failing)
    type_line(page, "cd /tmp; echo before-exit")
    wait_for_line(page, failing, "before-exit")
    type_line(page, "exit 3")
    wait_for_status(page, failing, "exited-error")

    line = exit_line(page, failing)
    expect(line).to_be_visible()
    expect(line).to_contain_text("bash exited with code 3")
    expect(line.get_by_role("button", name="Restart")).to_be_visible()
    expect(line.get_by_role("button", name="Close")).to_be_visible()
    # The line sits below the terminal's last row, not over it.
    screen = page.locator(f"#pane-{failing} .xterm-screen")

    def line_below_screen() -> bool:
        screen_box, line_box = screen.bounding_box(), line.bounding_box()
        assert screen_box
        assert line_box
        return bool(screen_box["y"] + screen_box["height"] <= line_box["y"] + 0.5)

    # The renderer redraws its box on its next frame: wait for that, never for a fixed time.
    wait_until(line_below_screen, what="the exit line sits below the terminal's last row")
    assert buffer_lines(page, failing)[-2:] == ["$ exit 3", "exit"]
    # The error icon is a closed shape (a triangle), not a second ✕ next to the close button.
    icon = page.get_by_role("img", name="Exited with code 3")
    expect(icon).to_be_visible()
    paths = icon.evaluate(
        "(el) => [...el.querySelectorAll('path')].map((p) => p.getAttribute('d'))"
    )
    assert any(d.rstrip().endswith("z") for d in paths), paths
    assert page.locator(f'.tab[data-id="{failing}"] .tab-close').inner_text() == "\u00d7"
    shot(page, "5-exited-in-pane")
    # Other tabs keep their size: the exit line only shrinks the exited terminal's box.
    activate(page, other)
    running_rows = terminal(page, other)["rows"]
    assert terminal(page, failing)["rows"] < running_rows

    # Restart: a new shell in the same place, with the same title, in the same folder.
    activate(page, failing)
    line.get_by_role("button", name="Restart").click()
    page.wait_for_function(
        "(old) => !window.__desk.terminals().some((t) => t.id === old)", arg=failing
    )
    order = [t["id"] for t in terminals(page)]
    assert len(order) == 2
    assert order[1] == other
    restarted = order[0]
    wait_attached(page, restarted)
    assert terminal(page, restarted)["title"] == "failing"
    assert terminal(page, restarted)["active"]
    wait_until(lambda: terminal(page, restarted)["rows"] == running_rows, what="full size again")
    ids = [info["id"] for info in service.request("GET", "/api/pty")]
    assert failing not in ids
    assert restarted in ids
    focus_terminal(page, restarted)
    type_line(page, "echo restarted-$((2+2))")
    wait_for_line(page, restarted, "restarted-4")
    shot(page, "5-restarted")

    # Close from the exit line: no question, the tab goes.
    type_line(page, "exit 0")
    wait_for_status(page, restarted, "exited-ok")
    expect(exit_line(page, restarted)).to_contain_text("exited with code 0")
    exit_line(page, restarted).get_by_role("button", name="Close").click()
    expect(page.get_by_role("dialog")).to_be_hidden()
    wait_until(lambda: [t["id"] for t in terminals(page)] == [other], what="closed")


def test_closing_asks_only_when_a_program_runs_and_cancel_is_the_default(
    page: Page, service: Service
) -> None:
    idle, busy = open_shells(page, service, "idle", "busy")

    activate(page, busy)
    focus_terminal(page, busy)
    type_line(page, "sleep 600")
    wait_until(lambda: terminal(page, busy)["foreground"] == "sleep", what="sleep in front")
    page.keyboard.press("Control+Shift+W")
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("sleep is still running")
    expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
    shot(page, "5-close-confirm-cancel-default")
    page.keyboard.press("Enter")
    expect(dialog).to_be_hidden()
    assert busy in [t["id"] for t in terminals(page)]
    page.keyboard.press("Control+Shift+W")
    dialog.get_by_role("button", name="Close terminal").click()
    wait_until(lambda: [t["id"] for t in terminals(page)] == [idle], what="busy closed")

    # A shell idle at its prompt closes at once.
    wait_until(
        lambda: service.request("GET", f"/api/pty/{idle}")["foreground_process"] == "bash",
        what="the idle shell is in the foreground",
    )
    focus_terminal(page, idle)
    page.keyboard.press("Control+Shift+W")
    wait_until(lambda: terminals(page) == [], what="idle closed without a question")
    expect(dialog).to_be_hidden()
    assert service.request("GET", "/api/pty") == []
