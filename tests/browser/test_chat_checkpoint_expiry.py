"""A turn older than the checkpoints kept (the session's last 100 turns), in Chromium: its
revert and its diff are refused as checkpoint.expired, and the page says so in plain words on
the turn, then offers no revert on it or any earlier turn, nor a diff link; a kept turn still
offers its revert."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.support.browser_chat import open_chat
from tests.support.chat import (
    LOAD_EVERY_PAGE_SCRIPT,
    MODEL,
    assistant,
    create_session,
    publish,
    user,
)
from tests.support.service import Service

pytestmark = pytest.mark.browser

KEPT = 100  # desktop/checkpoints/housekeeping.py RETENTION
TOO_OLD_TO_UNDO = "This turn is too old to undo: Desk keeps the last 100 turns' snapshots."
TOO_OLD_TO_SHOW = (
    "This turn is too old to show its changes: Desk keeps the last 100 turns' snapshots."
)


def changed_files(message_id: str, n: int) -> list[tuple[str, dict[str, Any]]]:
    """An answer whose step changed a file (a checkpoint with made-up snapshot ids: the
    service refuses an expired turn before it reads any snapshot)."""
    checkpoint = {
        "start": f"{2 * n + 1:040x}",
        "end": f"{2 * n + 2:040x}",
        "files": [{"path": f"f{n}.txt", "status": "modified", "additions": 1, "deletions": 1}],
    }
    return [
        ("session.step.started", {"message_id": message_id, "agent": "build", "model": MODEL}),
        ("session.text", {"message_id": message_id, "text": f"Changed f{n}.txt."}),
        (
            "session.step.ended",
            {"message_id": message_id, "finish": "stop", "checkpoint": checkpoint},
        ),
    ]


def open_old_session(browser: Browser, service: Service) -> Page:
    """Two turns that changed files, then 100 newer ones; the page shows every message."""
    sid = create_session(service)
    events: list[tuple[str, dict[str, Any]]] = []
    for n in range(2):
        events += user(f"old{n}", f"Change f{n}.txt")
        events += changed_files(f"olda{n}", n)
    for n in range(KEPT):
        events += user(f"u{n:03d}", f"Question {n}")
        events += assistant(f"a{n:03d}", f"Answer {n}")
    publish(service, sid, events)
    page = browser.new_context().new_page()
    open_chat(page, service, sid)
    assert page.evaluate(LOAD_EVERY_PAGE_SCRIPT) == 2 * (KEPT + 2)
    return page


def test_a_turn_older_than_the_kept_snapshots_says_so_and_offers_no_undo(
    browser: Browser, agent_service: Service
) -> None:
    page = open_old_session(browser, agent_service)

    newer = page.locator(".message-actions[data-for='old1']")
    older = page.locator(".message-actions[data-for='old0']")
    # The diff first: refused, said plainly in the dialog, and the link becomes words.
    turn = page.locator(".chat-row:has(.message[data-id='olda1']) .turn-changes")
    turn.click()
    dialog = page.locator(".diff-dialog")
    expect(dialog.get_by_role("alert")).to_have_text(TOO_OLD_TO_SHOW)
    dialog.get_by_role("button", name="Close").click()
    expect(turn).to_have_attribute("data-expired", "true")
    expect(turn).to_contain_text("too old to show: Desk keeps the last 100 turns")
    expect(page.get_by_role("button", name="Show the diff of this turn")).to_have_count(0)
    expect(newer.get_by_role("button", name="Revert to here")).to_have_count(0)
    expect(older.get_by_role("button", name="Revert to here")).to_have_count(0)
    # A turn that is kept still offers its revert.
    kept = page.locator(f".message-actions[data-for='u{KEPT - 1:03d}']")
    page.locator(".chat-scroll").evaluate("(el) => (el.scrollTop = el.scrollHeight)")
    expect(kept.get_by_role("button", name="Revert to here")).to_have_count(1)


def test_a_refused_revert_is_said_on_the_turn_and_earlier_turns_offer_none(
    browser: Browser, agent_service: Service
) -> None:
    page = open_old_session(browser, agent_service)
    newer = page.locator(".message-actions[data-for='old1']")
    older = page.locator(".message-actions[data-for='old0']")
    expect(older.get_by_role("button", name="Revert to here")).to_have_count(1)
    newer.get_by_role("button", name="Revert to here").click()
    confirm = page.locator(".revert-dialog")
    expect(confirm.get_by_role("alert")).to_have_text(TOO_OLD_TO_UNDO)
    expect(confirm).not_to_contain_text("Checkpoints are kept")
    confirm.get_by_role("button", name="Cancel").click()
    expect(confirm).to_be_hidden()
    expect(newer.locator(".turn-expired")).to_have_text(TOO_OLD_TO_UNDO)
    expect(newer.get_by_role("button", name="Revert to here")).to_have_count(0)
    expect(older.get_by_role("button", name="Revert to here")).to_have_count(0)
    expect(newer.get_by_role("button", name="Fork from here")).to_have_count(1)
