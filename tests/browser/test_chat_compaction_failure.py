"""A "Compact now" whose summary request still fails after its retries, in Chromium: the
retry banner goes in every window showing the session, and the failure is said in plain
words over the messages, with the provider's own words, until the next compaction."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, expect

from tests.support.browser_chat import open_chat
from tests.support.chat import assistant, create_session, history, publish, user
from tests.support.compaction import prose
from tests.support.fake_provider import error_reply, text_reply
from tests.support.fake_provider_thread import ThreadedFakeProvider
from tests.support.service import Service

pytestmark = pytest.mark.browser


def test_a_compaction_that_fails_after_its_retry_ends_the_banner_and_says_why(
    browser: Browser, agent_service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    sid = create_session(agent_service)
    events = history(12)
    for n in range(4):  # long answers: the older part is worth summarising
        events += user(f"q{n}", f"Tell me about part {n}.")
        events += assistant(f"r{n}", prose(800, n))
    publish(agent_service, sid, events)
    # The summary request: a server error (retried after a countdown), then a refusal.
    fake_provider.script(
        error_reply(503, "Upstream overloaded", error_type="server_error"),
        error_reply(400, "Summary request refused", error_type="invalid_request_error"),
        text_reply("A summary."),
    )
    page = browser.new_context().new_page()
    other = browser.new_context().new_page()
    open_chat(page, agent_service, sid)
    open_chat(other, agent_service, sid)

    page.locator(".chat-header .context-compact").click()
    for window in (page, other):
        expect(window.locator(".chat-retry")).to_contain_text("had a server error (HTTP 503)")

    for window in (page, other):
        expect(window.locator(".chat-retry")).to_have_count(0, timeout=15000)
        failure = window.locator(".chat-compaction-failed")
        expect(failure).to_have_attribute("role", "alert")
        expect(failure.locator(".chat-compaction-text")).to_have_text(
            re.compile(
                r"^Nothing was compacted: the model could not write the summary\. The provider "
                r"at 127\.0\.0\.1:\d+ refused the request \(HTTP 400\)\. The conversation is "
                r"as it was\.$"
            )
        )
        expect(failure.locator(".chat-compaction-detail")).to_have_text(
            "HTTP 400: Summary request refused"
        )
    expect(page.locator(".chat-header .context-compact")).to_have_text("Compact now")
    expect(page.locator(".chat-header .context-error")).to_have_count(0)
    assert compactions(agent_service, sid) == 0

    # Dismissed in one window, it stays in the other until a compaction goes through.
    other.get_by_role("button", name="Dismiss this message about the compaction").click()
    expect(other.locator(".chat-compaction-failed")).to_have_count(0)
    expect(page.locator(".chat-compaction-failed")).to_have_count(1)
    page.locator(".chat-header .context-compact").click()
    for window in (page, other):
        expect(window.locator(".msg-compaction")).to_have_count(1, timeout=15000)
        expect(window.locator(".chat-compaction-failed")).to_have_count(0)
    assert fake_provider.invalid_count == 0


def compactions(service: Service, sid: str) -> int:
    rows = service.request("GET", f"/api/session/{sid}/message?limit=200")
    return sum(1 for m in rows if m.get("description") == "compaction")
