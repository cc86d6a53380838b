"""An agent's command's terminal tab, once the command ended, offers Close and never Restart
(a restart by hand would run the agent's command again: `rm -f` deletes again), says it was
the agent's command, and closes without a "The terminal was deleted." notice, in Chromium
against a real service, PTY host and the strict fake."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_agent import agent_runs, job_row, open_terminal_from, shell_call
from tests.support.browser_terminals import wait_attached
from tests.support.fake_provider import tool_call_reply
from tests.support.fake_provider_thread import ThreadedFakeProvider
from tests.support.service import Service

pytestmark = pytest.mark.browser


def test_an_agent_jobs_ended_tab_offers_close_not_restart(
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
    exit_line.get_by_role("button", name="Close").click()
    expect(page.locator(f"#pane-{terminal_id}")).to_have_count(0)
    # Closed for good (the service lists it no more), and no confusing "was deleted" notice.
    assert all(t["id"] != terminal_id for t in agent_service.request("GET", "/api/pty"))
    expect(page.locator("#terminal-notice")).not_to_contain_text("deleted")
    assert fake_provider.invalid_count == 0
