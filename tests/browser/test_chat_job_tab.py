"""An agent's command's terminal tab, once the command ended, offers Close and never a plain
Restart (a restart by hand would run the agent's command again: `rm -f` deletes again): "Run
again…" asks first, showing the exact command, with Cancel the default. It says it was the
agent's command, and closes without a "The terminal was deleted." notice, in Chromium against a
real service, PTY host and the strict fake."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_agent import agent_runs, job_row, open_terminal_from, shell_call
from tests.support.browser_terminals import activate, buffer_lines, wait_attached
from tests.support.fake_provider import tool_call_reply
from tests.support.fake_provider_thread import ThreadedFakeProvider
from tests.support.service import Service
from tests.support.wait import wait_until

pytestmark = pytest.mark.browser


def test_an_agent_jobs_ended_tab_offers_close_and_a_run_again_that_shows_the_command(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    sid = agent_runs(
        page,
        agent_service,
        fake_provider,
        tool_call_reply(shell_call("echo once-$((6*7)); sleep 2")),
        "started",
        "noted",
    )
    row = job_row(page)
    expect(row).to_have_attribute("data-status", "running", timeout=15000)
    terminal_id = agent_service.request("GET", f"/api/session/{sid}/jobs")[0]["terminal_id"]
    open_terminal_from(page, row.locator(".job-open-terminal"), terminal_id)
    wait_attached(page, terminal_id, role="observer")

    exit_line = page.locator(f"#pane-{terminal_id} .pane-exit")
    expect(exit_line).to_be_visible(timeout=20000)
    expect(exit_line).to_contain_text("The agent's command finished with code 0")
    expect(exit_line.get_by_role("button", name="Close")).to_be_visible()
    expect(exit_line.get_by_role("button", name="Restart")).to_be_hidden()

    # "Run again…" asks first, showing the exact command, and Cancel is the default (Enter).
    command = "echo once-$((6*7)); sleep 2"
    before = {t["id"] for t in agent_service.request("GET", "/api/pty")}
    exit_line.get_by_role("button", name="Run again…").click()
    dialog = page.get_by_role("dialog", name="Run the agent's command again?")
    expect(dialog).to_be_visible()
    expect(dialog.locator(".confirm-command")).to_have_text(command)
    expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
    page.keyboard.press("Enter")
    expect(dialog).to_be_hidden()
    assert {t["id"] for t in agent_service.request("GET", "/api/pty")} == before
    # Confirmed, it runs as the person's own terminal in the session (not an agent job).
    exit_line.get_by_role("button", name="Run again…").click()
    dialog.get_by_role("button", name="Run again").click()
    fresh = wait_until(
        lambda: [t for t in agent_service.request("GET", "/api/pty") if t["id"] not in before],
        what="the command run again",
    )[0]
    assert fresh["args"] == ["-c", command]
    assert fresh["group"] == sid
    assert fresh.get("job") is None
    wait_until(lambda: "once-42" in buffer_lines(page, fresh["id"]), what="its output")
    activate(page, terminal_id)

    exit_line.get_by_role("button", name="Close").click()
    expect(page.locator(f"#pane-{terminal_id}")).to_have_count(0)
    # Closed for good (the service lists it no more), and no confusing "was deleted" notice.
    assert all(t["id"] != terminal_id for t in agent_service.request("GET", "/api/pty"))
    expect(page.locator("#terminal-notice")).not_to_contain_text("deleted")
    assert fake_provider.invalid_count == 0
