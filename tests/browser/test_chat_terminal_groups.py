"""The terminal strip beside the chat, in Chromium: a session's terminal group is labelled with
the session's title (not its id), and a new terminal added to that group opens in the
session's folder; the new active tab is scrolled into view."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_chat import open_chat
from tests.support.chat import create_session
from tests.support.service import Service
from tests.support.wait import wait_until

pytestmark = pytest.mark.browser


def test_a_sessions_group_is_named_after_it_and_opens_terminals_in_its_folder(
    page: Page, service: Service, tmp_path: Path
) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    sid = create_session(service, "Payments API", directory=str(folder))
    service.request("POST", "/api/pty", {"group": sid, "title": "one"})
    service.request("POST", "/api/pty", {"title": "loose"})
    open_chat(page, service, sid)
    label = page.locator(".tab-group-label", has_text="Payments API")
    expect(label).to_be_visible()
    expect(page.locator(".tab-strip")).not_to_contain_text(sid)

    before = {t["id"] for t in service.request("GET", "/api/pty")}
    group = page.locator(".tab-group", has=label)
    group.get_by_role("button", name="Add a terminal to Payments API").click()

    def new_terminal() -> dict[str, object] | None:
        fresh = [t for t in service.request("GET", "/api/pty") if t["id"] not in before]
        return fresh[0] if fresh else None

    created = wait_until(new_terminal, what="a new terminal")
    assert created["group"] == sid
    assert created["cwd"] == str(folder)
    tab = page.locator(f".tab[data-id='{created['id']}']")
    expect(tab).to_have_attribute("aria-selected", "true")
    expect(tab).to_be_in_viewport()
