"""Checkpoints in Chromium against a real `desk serve` and the strict fake provider: a
turn's "N files changed" opens its diff (text only, never markup), the header shows the
session's total, "Revert to here" confirms with the files and restores them, the reverted
messages are dimmed with "Undo revert", and "Fork from here" opens a new session."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_chat import open_chat
from tests.support.chat import create_session
from tests.support.checkpoints import make_project
from tests.support.fake_provider import Call, text_reply, tool_call_reply
from tests.support.fake_provider_thread import ThreadedFakeProvider
from tests.support.service import Service
from tests.support.wait import wait_until

pytestmark = pytest.mark.browser

SUMMARY = "2 files changed +2 \u22121"  # the page writes a minus sign
MARKUP = '<img src=x onerror="window.__pwned=1">'


def test_a_turns_diff_revert_with_confirmation_undo_and_fork_from_the_page(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider, tmp_path: Path
) -> None:
    project = make_project(tmp_path / "project")
    (project / "build").mkdir()
    (project / "build" / "out.o").write_bytes(b"\0")
    fake_provider.script(
        tool_call_reply(
            Call("c1", "edit", {"path": "a.txt", "old": "beta", "new": "BETA"}),
            Call("c2", "write", {"path": "b.html", "content": MARKUP + "\n"}),
        ),
        text_reply("changed two files"),
    )
    sid = create_session(agent_service, directory=str(project))
    open_chat(page, agent_service, sid)
    agent_service.request("POST", f"/api/session/{sid}/prompt", {"text": "change things"})

    turn = page.locator(".turn-changes")
    expect(turn).to_have_text(SUMMARY, timeout=15000)
    expect(page.locator(".session-changes")).to_have_text(SUMMARY)
    turn.click()
    dialog = page.locator(".diff-dialog")
    expect(dialog).to_be_visible()
    edit = dialog.locator(".diff-file[data-path='a.txt']")
    expect(edit.locator(".diff-add .diff-text")).to_have_text("+BETA")
    expect(edit.locator(".diff-del .diff-text")).to_have_text("-beta")
    added = dialog.locator(".diff-file[data-path='b.html']")
    expect(added.locator(".diff-add .diff-text")).to_have_text("+" + MARKUP)
    expect(dialog.locator("img")).to_have_count(0)  # the file's markup stays text
    assert page.evaluate("() => window.__pwned") is None
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_be_hidden()

    user = page.locator(".msg-user").first
    actions = page.locator(f".message-actions[data-for='{user.get_attribute('data-id')}']")
    user.hover()
    actions.get_by_role("button", name="Revert to here").click()
    confirm = page.locator(".revert-dialog")
    expect(confirm.locator(".revert-files.restored li")).to_have_text(["a.txt", "b.html"])
    expect(confirm).to_contain_text("build/")  # the .gitignore'd folder is named as not restored
    confirm.get_by_role("button", name="Revert", exact=True).click()
    expect(confirm).to_be_hidden()
    wait_until(lambda: not (project / "b.html").exists(), what="b.html removed")
    assert (project / "a.txt").read_text() == "alpha\nbeta\ngamma\n"
    expect(page.locator(".message[data-reverted='true']")).to_have_count(3)
    expect(page.locator(".session-changes")).to_have_count(0)

    undo = actions.get_by_role("button", name="Undo revert")
    undo.click()
    expect(page.locator(".message[data-reverted='true']")).to_have_count(0)
    wait_until(lambda: (project / "b.html").exists(), what="b.html back")
    assert (project / "a.txt").read_text() == "alpha\nBETA\ngamma\n"

    answer = page.locator(".msg-assistant").last
    answer.hover()
    fork = page.locator(f".message-actions[data-for='{answer.get_attribute('data-id')}']")
    fork.get_by_role("button", name="Fork from here").click()
    page.wait_for_function(
        "(id) => { const c = window.__desk.chat(); return c.active && c.active !== id }", arg=sid
    )
    forked = page.locator(".chat").get_attribute("data-session")
    assert forked != sid
    info = agent_service.request("GET", f"/api/session/{forked}")
    assert info["forked_from"]["session_id"] == sid
    expect(page.locator(".msg-user .plain")).to_have_text(["change things"], timeout=10000)
    assert fake_provider.invalid_count == 0
