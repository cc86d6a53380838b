"""Permission prompts in Chromium against a real `desk serve` and the strict fake provider: in
`ask` mode (set with the header's switch) a waiting call shows a card with what it would do;
Allow once runs it, Deny gives the tool "denied by the user"; the card is read from the
service, so it is back after a reload and after a kill -9 and restart of the service."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_agent import ASK_COMMAND, ask_mode_session, prompt, waiting_shell_call
from tests.support.chromium import sign_in
from tests.support.fake_provider import Call, text_reply, tool_call_reply
from tests.support.fake_provider_thread import ThreadedFakeProvider
from tests.support.service import Service

pytestmark = pytest.mark.browser


def test_in_ask_mode_a_shell_call_waits_with_its_command_and_allow_once_runs_it(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    _, card = waiting_shell_call(page, agent_service, fake_provider, "ran it")
    expect(card.locator(".permission-tool")).to_have_text("shell")
    expect(card.locator(".permission-command")).to_have_text(ASK_COMMAND)
    tool = page.locator(".part-tool")
    expect(tool).to_have_attribute("data-status", "running")  # waiting: it has not run

    card.get_by_role("button", name="Allow once").click()
    expect(card).to_have_count(0)
    expect(tool).to_have_attribute("data-status", "completed", timeout=15000)
    tool.locator(".tool-name").click()
    expect(tool.locator(".tool-body")).to_contain_text("allowed-42")
    expect(page.locator(".msg-assistant").last).to_contain_text("ran it", timeout=15000)
    assert fake_provider.invalid_count == 0


def test_deny_gives_the_tool_a_denied_by_the_user_error(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    sid, card = waiting_shell_call(page, agent_service, fake_provider, "ok, not")
    card.get_by_role("button", name="Deny").click()
    expect(card).to_have_count(0)
    tool = page.locator(".part-tool")
    expect(tool).to_have_attribute("data-status", "error", timeout=15000)
    tool.locator(".tool-name").click()
    expect(tool.locator(".tool-error")).to_contain_text("denied by the user")
    expect(page.locator(".msg-assistant").last).to_contain_text("ok, not", timeout=15000)
    assert agent_service.request("GET", f"/api/session/{sid}/permission") == []
    assert fake_provider.invalid_count == 0


def test_the_waiting_card_is_shown_again_after_a_reload_and_after_a_kill_9_and_restart(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    sid, card = waiting_shell_call(page, agent_service, fake_provider, "ran it")

    page.reload()
    page.wait_for_function("(id) => window.__desk?.chat().active === id", arg=sid)
    expect(card.locator(".permission-command")).to_have_text(ASK_COMMAND, timeout=15000)

    agent_service.kill()
    agent_service.start()
    sign_in(page, agent_service)  # a fresh page: only the service can bring the card back
    page.wait_for_function("(id) => window.__desk.chat().active === id", arg=sid)
    expect(card.locator(".permission-command")).to_have_text(ASK_COMMAND, timeout=15000)
    expect(page.get_by_label("Permission mode")).to_have_value("ask")

    card.get_by_role("button", name="Allow once").click()
    expect(card).to_have_count(0)
    expect(page.locator(".part-tool")).to_have_attribute("data-status", "completed", timeout=20000)
    expect(page.locator(".msg-assistant").last).to_contain_text("ran it", timeout=15000)
    assert fake_provider.invalid_count == 0


def test_an_edit_call_shows_its_diff_with_added_and_removed_lines(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("keep\nalpha\nend\n")
    fake_provider.script(
        tool_call_reply(
            Call("call_1", "edit", {"path": "notes.txt", "old": "alpha", "new": "beta"})
        ),
        text_reply("edited"),
    )
    sid = ask_mode_session(page, agent_service, directory=str(tmp_path))
    prompt(agent_service, sid)
    card = page.locator(".permission-card[data-call='call_1']")
    expect(card).to_be_visible(timeout=15000)
    expect(card.locator(".permission-tool")).to_have_text("edit")
    expect(card.locator(".diff-del .diff-text")).to_have_text(["-alpha"])
    expect(card.locator(".diff-add .diff-text")).to_have_text(["+beta"])
    assert (tmp_path / "notes.txt").read_text() == "keep\nalpha\nend\n"  # not yet
    card.get_by_role("button", name=re.compile(r"^Allow .* for this session$")).click()
    expect(page.locator(".part-tool")).to_have_attribute("data-status", "completed", timeout=15000)
    assert (tmp_path / "notes.txt").read_text() == "keep\nbeta\nend\n"
    assert fake_provider.invalid_count == 0
