"""Search in a terminal says what it found (issue 12, item 6): "n of m", a "no matches"
state, a highlight that follows the query as it is typed and erased, and the view back at
the bottom when search closes."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_tabs import focus_terminal, open_ui, shot
from tests.support.browser_terminals import buffer_lines, create_shell, type_line, wait_attached
from tests.support.service import Service
from tests.support.wait import wait_until

pytestmark = pytest.mark.browser


def selection(page: Page, pty_id: str) -> str:
    return page.evaluate("(id) => window.__desk.selection(id)", pty_id)  # type: ignore[no-any-return]


def viewport(page: Page, pty_id: str) -> dict[str, int]:
    return page.evaluate("(id) => window.__desk.viewport(id)", pty_id)  # type: ignore[no-any-return]


def test_search_counts_matches_follows_typing_and_returns_to_the_bottom(
    page: Page, service: Service
) -> None:
    pty_id = create_shell(service, "searched")
    open_ui(page, service, 1)
    wait_attached(page, pty_id)
    focus_terminal(page, pty_id)
    type_line(page, "seq 1 300 | sed 's/^/item-/'")
    wait_until(lambda: buffer_lines(page, pty_id)[-1] == "$", what="all rows")
    assert viewport(page, pty_id)["top"] == viewport(page, pty_id)["bottom"]

    page.keyboard.press("Control+Shift+F")
    field = page.get_by_role("searchbox", name="Search in terminal")
    expect(field).to_be_focused()
    count = page.locator(".search-count")
    # item-2, item-20..29, item-200..299 (the command line holds no "item-2").
    field.press_sequentially("item-2")
    expect(count).to_have_text(re.compile(r"^\d+ of 111$"))
    wait_until(lambda: selection(page, pty_id) == "item-2", what="first match selected")
    field.press_sequentially("9")
    expect(count).to_have_text(re.compile(r"^\d+ of 11$"))
    wait_until(lambda: selection(page, pty_id) == "item-29", what="highlight follows")
    shot(page, "6-search-n-of-m")

    field.press_sequentially("x")
    expect(count).to_have_text("No matches")
    expect(field).to_have_attribute("aria-invalid", "true")
    wait_until(lambda: selection(page, pty_id) == "", what="nothing highlighted")
    shot(page, "6-search-no-matches")
    field.press("Backspace")
    expect(count).to_have_text(re.compile(r"^\d+ of 11$"))
    expect(field).to_have_attribute("aria-invalid", "false")
    wait_until(lambda: selection(page, pty_id) == "item-29", what="highlight back")

    # item-15 and item-150..159, all far above the bottom: the view scrolls up to them...
    field.fill("item-15")
    expect(count).to_have_text(re.compile(r"^\d+ of 11$"))
    wait_until(lambda: viewport(page, pty_id)["top"] < viewport(page, pty_id)["bottom"])
    before = count.inner_text()
    field.press("Enter")
    expect(count).not_to_have_text(before)
    expect(count).to_have_text(re.compile(r"^\d+ of 11$"))

    # ...and closing the search returns to the bottom, with the focus in the terminal.
    field.press("Escape")
    expect(page.locator("#search-bar")).to_be_hidden()
    wait_until(
        lambda: viewport(page, pty_id)["top"] == viewport(page, pty_id)["bottom"],
        what="back at the bottom",
    )
    assert selection(page, pty_id) == ""
    type_line(page, "echo back-$((1+1))")
    wait_until(lambda: "back-2" in buffer_lines(page, pty_id), what="typed into the terminal")

    # Reopening shows the last query's count again, from the bottom.
    page.keyboard.press("Control+Shift+F")
    expect(count).to_have_text(re.compile(r"^\d+ of 11$"))
