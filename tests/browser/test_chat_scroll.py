"""A 10,000-message session in Chromium: every page loads on scroll and scrolling through
shows every message of the virtualised list. How long the page's tasks take while it
scrolls is a figure of bench/ui_chat.py (printed, never asserted: it is wall time)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from tests.support.browser_chat import open_chat
from tests.support.chat import (
    LOAD_EVERY_PAGE_SCRIPT,
    SCROLL_THROUGH_SCRIPT,
    create_session,
    history,
    publish,
)
from tests.support.service import Service

MESSAGES = 10_000
SCROLL_STEP = 200  # px per frame at least
SCROLL_OVERLAP = 40  # px of the last screen still in view after a step


@pytest.mark.timeout(600)
def test_ten_thousand_messages_load_on_scroll_and_every_one_is_rendered(
    page: Page, service: Service
) -> None:
    # A tall window: the walk below is frame-bound, and a taller screen takes fewer frames.
    page.set_viewport_size({"width": 1200, "height": 2400})
    sid = create_session(service, "Long history")
    publish(service, sid, history(MESSAGES))
    open_chat(page, service, sid)
    # Every page in first (each arrives as the reader nears the top: the way up), then
    # scroll through all 10,000 down to the newest, nearly a screen per frame (a fast wheel;
    # the overlap keeps every message on screen at some frame, so each must be rendered).
    # bench/ui_chat.py also scrolls back up, for its long-task figures.
    assert page.evaluate(LOAD_EVERY_PAGE_SCRIPT) == MESSAGES
    screen = page.evaluate("() => document.querySelector('.chat-scroll').clientHeight")
    step = max(SCROLL_STEP, screen - SCROLL_OVERLAP)
    _, seen = page.evaluate(SCROLL_THROUGH_SCRIPT, [step, False])
    assert seen == MESSAGES
