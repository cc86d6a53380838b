"""A call waiting for the person's permission is its own state in Chromium: the sidebar, the
header, the composer and the tool card say "Waiting for you" with their own icon, the focus
moves to the card's answer, the window title says it while the window is in the background;
and the card's mark tells the truth afterwards (denied differs from failed)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_agent import waiting_shell_call
from tests.support.fake_provider_thread import ThreadedFakeProvider
from tests.support.service import Service

pytestmark = pytest.mark.browser


def test_a_waiting_call_says_waiting_for_you_everywhere_and_takes_the_focus(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    sid, card = waiting_shell_call(page, agent_service, fake_provider, "fine, not run")
    waiting = "[data-status='waiting'][aria-label='Waiting for you']"
    expect(page.locator(f".session-item[data-id='{sid}'] {waiting}")).to_be_visible()
    expect(page.locator(f".chat-header {waiting}")).to_be_visible()
    expect(page.locator(".composer-waiting")).to_contain_text("Waiting for you")
    expect(page.locator(".composer-hint:not(.composer-waiting)")).to_have_count(0)
    tool = page.locator(".part-tool")
    expect(tool).to_have_attribute("data-mark", "waiting")
    expect(tool.locator(f".tool-status{waiting}")).to_be_visible()
    expect(tool.locator(".tool-waiting")).to_have_text("Waiting for you")
    expect(tool.locator(".job-open-terminal")).to_have_count(0)
    expect(card.get_by_role("button", name="Allow once")).to_be_focused()

    # In the background the window title says it; in front again it does not.
    page.evaluate("() => { document.hasFocus = () => false; dispatchEvent(new Event('blur')) }")
    page.wait_for_function("() => document.title.startsWith('Waiting for you · ')")
    page.evaluate("() => { document.hasFocus = () => true; dispatchEvent(new Event('focus')) }")
    page.wait_for_function("() => !document.title.startsWith('Waiting for you')")
    page.evaluate("() => { document.hasFocus = () => false; dispatchEvent(new Event('blur')) }")
    page.wait_for_function("() => document.title.startsWith('Waiting for you · ')")

    card.get_by_role("button", name="Deny").click()
    expect(tool).to_have_attribute("data-mark", "denied", timeout=15000)
    expect(tool.locator(".tool-status")).to_have_attribute("aria-label", "Denied")
    expect(page.locator(f".chat-header {waiting}")).to_have_count(0)
    expect(page.locator(".composer-waiting")).to_have_count(0)
    page.wait_for_function("() => !document.title.startsWith('Waiting for you')")
    assert fake_provider.invalid_count == 0
