"""Keys around the terminal (issue 12, items 3 and 8): renaming never types into the shell,
F2 stays with terminal programs while Ctrl+Shift+E renames from the terminal, focus returns
to the terminal after the theme button, and Ctrl+Shift+S leads from the terminal back to the
tab strip."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_tabs import focus_terminal, open_shells, open_ui, shot
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


def settled(page: Page, pty_id: str) -> list[str]:
    wait_until(lambda: buffer_lines(page, pty_id)[-1] == "$", what="prompt")
    return buffer_lines(page, pty_id)


def test_enter_that_confirms_a_rename_never_reaches_the_shell(page: Page, service: Service) -> None:
    pty_id = create_shell(service, "before")
    open_ui(page, service, 1)
    wait_attached(page, pty_id)
    focus_terminal(page, pty_id)
    type_line(page, "echo ready")
    wait_for_line(page, pty_id, "ready")
    before = settled(page, pty_id)

    page.locator(f'.tab[data-id="{pty_id}"] .tab-title').dblclick()
    name = page.get_by_role("textbox", name="Terminal name")
    name.fill("renamed")
    shot(page, "3-renaming")
    name.press("Enter")
    expect(page.locator(f'.tab[data-id="{pty_id}"] .tab-title')).to_have_text("renamed")
    wait_until(
        lambda: service.request("GET", f"/api/pty/{pty_id}")["title"] == "renamed",
        what="renamed on the service",
    )
    # Focus went back to the terminal; the next command follows the old prompt directly.
    type_line(page, "echo after-rename")
    wait_for_line(page, pty_id, "after-rename")
    after = settled(page, pty_id)
    assert after == [*before[:-1], "$ echo after-rename", "after-rename", "$"], after


def test_f2_reaches_terminal_programs_and_ctrl_shift_e_renames_from_the_terminal(
    page: Page, service: Service
) -> None:
    pty_id = create_shell(service, "keys")
    open_ui(page, service, 1)
    wait_attached(page, pty_id)
    focus_terminal(page, pty_id)
    type_line(page, "cat -v")
    wait_until(lambda: terminal(page, pty_id)["foreground"] == "cat", what="cat runs")
    # F2 in the terminal is the program's key (mc, htop): it arrives as ESC O Q.
    page.keyboard.press("F2")
    page.keyboard.press("Enter")
    wait_for_line(page, pty_id, "^[OQ")
    expect(page.get_by_role("textbox", name="Terminal name")).to_have_count(0)

    page.keyboard.press("Control+Shift+E")
    name = page.get_by_role("textbox", name="Terminal name")
    expect(name).to_be_focused()
    name.fill("from-terminal")
    name.press("Enter")
    expect(page.locator(f'.tab[data-id="{pty_id}"] .tab-title')).to_have_text("from-terminal · cat")
    # Nothing of the shortcut or the Enter reached cat: the next line is only what we type.
    type_line(page, "next")
    wait_until(lambda: buffer_lines(page, pty_id)[-2:] == ["next", "next"], what="cat echoed")
    lines = buffer_lines(page, pty_id)
    assert lines[-4:] == ["^[OQ", "^[OQ", "next", "next"], lines

    # F2 on the focused tab still renames, and Escape cancels.
    page.locator(f'.tab[data-id="{pty_id}"]').focus()
    page.keyboard.press("F2")
    expect(page.get_by_role("textbox", name="Terminal name")).to_be_focused()
    page.keyboard.press("Escape")
    expect(page.locator(f'.tab[data-id="{pty_id}"] .tab-title')).to_have_text("from-terminal · cat")


def test_theme_button_gives_the_keyboard_back_to_the_terminal(page: Page, service: Service) -> None:
    pty_id = create_shell(service, "themed")
    open_ui(page, service, 1)
    wait_attached(page, pty_id)
    before = page.evaluate("() => document.documentElement.dataset.theme ?? 'system'")
    page.locator("#theme-toggle").click()
    after = page.evaluate("() => document.documentElement.dataset.theme ?? 'system'")
    assert after != before
    # Typing goes to the terminal, and its Enter does not flip the theme back.
    type_line(page, "echo themed-$((3*3))")
    wait_for_line(page, pty_id, "themed-9")
    assert page.evaluate("() => document.documentElement.dataset.theme ?? 'system'") == after
    shot(page, "8-after-theme-click")


def test_ctrl_shift_s_leads_from_the_terminal_to_the_strip_and_enter_back(
    page: Page, service: Service
) -> None:
    first, second = open_shells(page, service, "one", "two")
    focus_terminal(page, first)
    # Tab stays in the terminal (a shell completes with it)...
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.classList.contains('xterm-helper-textarea')")
    # ...and Ctrl+Shift+S moves to the active tab in the strip.
    page.keyboard.press("Control+Shift+S")
    expect(page.locator(f'.tab[data-id="{first}"]')).to_be_focused()
    shot(page, "8-strip-focused")
    page.keyboard.press("ArrowRight")
    expect(page.locator(f'.tab[data-id="{second}"]')).to_be_focused()
    page.keyboard.press("Enter")
    type_line(page, "echo in-two")
    wait_for_line(page, second, "in-two")
    assert "in-two" not in buffer_lines(page, first)
