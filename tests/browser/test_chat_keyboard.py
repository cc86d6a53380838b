"""The keyboard in Chromium: focus lands in the prompt box after creating, renaming or deleting
a session; Alt+N, Alt+P and Alt+Up/Down create, focus and switch; F1 lists every shortcut; the
open session's rename and delete buttons are visible without hovering; a reload gives the
keyboard to the prompt box or the terminal, wherever the person was last."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_terminals import create_shell
from tests.support.chat import create_session
from tests.support.chromium import sign_in
from tests.support.service import Service

pytestmark = pytest.mark.browser


def create_with_keys(page: Page, title: str) -> None:
    page.keyboard.press("Alt+n")
    dialog = page.locator("dialog.new-session-dialog")
    expect(dialog).to_be_visible()
    dialog.locator("#new-session-folder").fill("/tmp")
    dialog.locator("#new-session-title").fill(title)
    dialog.locator("#new-session-title").press("Enter")
    expect(page.locator(".chat-title")).to_have_text(title)


def test_focus_follows_the_person_and_shortcuts_create_focus_and_switch_sessions(
    page: Page, service: Service
) -> None:
    sign_in(page, service)
    prompt = page.locator(".composer-input")

    create_with_keys(page, "First")
    expect(prompt).to_be_focused()
    create_with_keys(page, "Second")
    expect(prompt).to_be_focused()

    page.locator(".chat-title").click()
    page.keyboard.press("Alt+p")
    expect(prompt).to_be_focused()
    page.keyboard.press("Alt+ArrowDown")
    expect(page.locator(".chat-title")).to_have_text("First")
    expect(prompt).to_be_focused()
    page.keyboard.press("Alt+ArrowUp")
    expect(page.locator(".chat-title")).to_have_text("Second")

    # The open session's buttons are there without a hover; renaming ends in the prompt box.
    current = page.locator(".session-item[aria-current='true']")
    rename = current.get_by_role("button", name="Rename Second")
    expect(rename).to_be_visible()
    expect(current.get_by_role("button", name="Delete Second")).to_be_visible()
    rename.click()
    page.locator(".session-rename").fill("Second, renamed")
    page.locator(".session-rename").press("Enter")
    expect(page.locator(".chat-title")).to_have_text("Second, renamed")
    expect(prompt).to_be_focused()

    current.get_by_role("button", name="Delete Second, renamed").click()
    page.locator("dialog.delete-session-dialog").get_by_role(
        "button", name="Delete session"
    ).click()
    expect(page.locator(".session-item")).to_have_count(1)
    # The person continues in the session left, in its prompt box.
    expect(page.locator(".chat-title")).to_have_text("First")
    expect(prompt).to_be_focused()

    page.keyboard.press("F1")
    help_dialog = page.locator("dialog.keyboard-help")
    expect(help_dialog).to_be_visible()
    expect(help_dialog).to_contain_text("Alt+N")
    expect(help_dialog).to_contain_text("Ctrl+Shift+T")
    page.keyboard.press("Escape")
    expect(help_dialog).to_be_hidden()


def test_a_reload_gives_the_keyboard_to_the_prompt_box_unless_the_person_was_in_a_terminal(
    page: Page, service: Service
) -> None:
    shell = create_shell(service, "work")
    sid = create_session(service, "Notes")
    sign_in(page, service)
    terminal = page.locator(f"#pane-{shell} .xterm-helper-textarea")
    prompt = page.locator(".composer-input")

    def reload() -> None:
        page.reload()
        # The terminal has loaded and opened: it has had its chance to take the keyboard.
        expect(page.locator(f".tab[data-id='{shell}']")).to_be_visible()
        expect(terminal).to_be_attached()

    # No chat session open: the terminal has the keyboard.
    expect(terminal).to_be_focused()
    page.locator(f".session-item[data-id='{sid}'] .session-open").click()
    expect(page.locator(".chat-title")).to_have_text("Notes")

    # The page opens on the remembered session, typing into its prompt box.
    reload()
    expect(page.locator(".chat-title")).to_have_text("Notes")
    expect(prompt).to_be_focused()
    page.keyboard.type("where was I")
    expect(prompt).to_have_value("where was I")

    # Last in the terminal: after a reload the terminal has the keyboard, the session still open.
    page.locator(f"#pane-{shell} .xterm").click()
    expect(terminal).to_be_focused()
    reload()
    expect(page.locator(".chat-title")).to_have_text("Notes")
    expect(terminal).to_be_focused()

    # Back in the chat (the sidebar counts): the prompt box again.
    page.locator(f".session-item[data-id='{sid}'] .session-open").click()
    reload()
    expect(prompt).to_be_focused()
