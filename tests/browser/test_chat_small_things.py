"""Small things a person notices, in Chromium: the first screen's "No sessions yet." offers a
"Start a session" button and the empty main area speaks of chat sessions as well as terminals;
the new-session dialog takes `~` (showing where it leads) and names the service's folder that
an empty field means; the "exit 0" badge reads in full contrast in both themes; the native
select follows the dark theme."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support.chromium import sign_in
from tests.support.service import ROOT, Service

pytestmark = pytest.mark.browser

LUMINANCE = """(colour) => {
    const [r, g, b] = colour.match(/[0-9.]+/g).slice(0, 3).map((v) => {
        const c = Number(v) / 255
        return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
    })
    return 0.2126 * r + 0.7152 * g + 0.0722 * b
}"""


def test_no_sessions_yet_offers_a_button_that_opens_the_new_session_dialog(
    page: Page, service: Service
) -> None:
    sign_in(page, service)
    empty = page.locator(".sessions-empty")
    expect(empty).to_contain_text("No sessions yet.")
    empty.get_by_role("button", name="Start a session").click()
    expect(page.locator("dialog.new-session-dialog")).to_be_visible()


def test_the_first_screen_speaks_of_chat_sessions_and_terminals(
    page: Page, service: Service
) -> None:
    sign_in(page, service)
    empty = page.locator("#empty-terminals")
    expect(empty).to_contain_text("Chat with the agent in a session")
    expect(empty).to_contain_text("No terminals.")
    empty.get_by_role("button", name="Start a chat session").click()
    dialog = page.locator("dialog.new-session-dialog")
    expect(dialog).to_be_visible()
    dialog.get_by_label("Working folder").fill("/tmp")
    dialog.get_by_role("button", name="Create session").click()
    expect(page.locator(".chat-title")).to_be_visible()
    # A session open beside the terminals: the terminals' own words are enough there.
    expect(page.locator(".chat-welcome-text")).to_have_count(0)
    expect(page.get_by_text("No terminals.")).to_be_visible()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The service user's home (the service started after this inherits it)."""
    folder = tmp_path / "home"
    (folder / "project").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(folder))
    return Path(os.path.realpath(folder))


def test_the_new_session_dialog_takes_a_tilde_and_names_the_services_folder(
    page: Page, home: Path, service: Service
) -> None:
    sign_in(page, service)
    page.get_by_role("button", name="New session").click()
    dialog = page.get_by_role("dialog", name="New session")
    field = dialog.get_by_label("Working folder")
    field.fill("")
    expect(field).to_have_attribute("placeholder", f"The service's folder: {ROOT}")
    hint = dialog.locator(".folder-hint")
    field.fill("~/nope")
    expect(hint).to_have_text(f"Not an existing folder: {home / 'nope'}")
    dialog.get_by_role("button", name="Create session").click()
    expect(dialog.get_by_role("alert")).to_contain_text(
        f"'{home / 'nope'}' is not an existing folder"
    )
    field.fill("~/project")
    expect(hint).to_have_text(f"Opens in {home / 'project'}")
    dialog.get_by_role("button", name="Create session").click()
    expect(dialog).to_be_hidden()
    expect(page.locator(".chat-folder")).to_have_text(str(home / "project"))
    [session] = service.request("GET", "/api/session")
    assert session["directory"] == str(home / "project")


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_exit_badge_and_the_select_follow_the_theme_in_full_contrast(
    page: Page, service: Service, theme: str
) -> None:
    page.emulate_media(color_scheme=theme)  # type: ignore[arg-type]
    sign_in(page, service)
    page.evaluate(
        """() => {
            const badge = document.createElement('span')
            badge.className = 'tool-exit'
            badge.dataset.code = '0'
            badge.textContent = 'exit 0'
            const panel = document.createElement('div')
            panel.className = 'msg-assistant chat'
            const select = document.createElement('select')
            select.append(new Option('Auto'))
            panel.append(badge, select)
            document.body.append(panel)
        }"""
    )
    badge = page.locator(".tool-exit")
    fg = page.evaluate(f"({LUMINANCE})", badge.evaluate("(e) => getComputedStyle(e).color"))
    bg_colour = page.locator(".msg-assistant").evaluate(
        "(e) => getComputedStyle(e).backgroundColor"
    )
    bg = page.evaluate(f"({LUMINANCE})", bg_colour)
    ratio = (max(fg, bg) + 0.05) / (min(fg, bg) + 0.05)
    assert ratio >= 7, ratio
    select_bg = page.locator(".chat select").evaluate("(e) => getComputedStyle(e).backgroundColor")
    assert (page.evaluate(f"({LUMINANCE})", select_bg) < 0.1) == (theme == "dark"), select_bg
