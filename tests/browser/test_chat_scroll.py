"""A 10,000-message session in Chromium: every page loads on scroll, scrolling through shows
every message, and no task blocks the page for more than 50 ms (PerformanceObserver
'longtask', measured in the page)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from tests.browser.chat_helpers import _test_hooks, open_chat
from tests.support.chat import create_session, history, publish
from tests.support.service import Service

__all__ = ["_test_hooks"]

MESSAGES = 10_000
LONG_TASK_MS = 50
SCROLL_STEP = 200


@pytest.mark.timeout(600)
def test_ten_thousand_messages_scroll_without_long_tasks(page: Page, service: Service) -> None:
    sid = create_session(service, "Long history")
    publish(service, sid, history(MESSAGES))
    open_chat(page, service, sid)
    # Every page in first (each arrives as the reader nears the top), then measure scrolling
    # through all 10,000: down to the newest and back up, 200 px per frame (a brisk wheel).
    loaded = page.evaluate(
        """async () => {
            const el = document.querySelector('.chat-scroll')
            const frame = () => new Promise((resolve) => requestAnimationFrame(resolve))
            const done = () => {
                const chat = window.__desk.chat()
                const all = chat.listed.length === chat.messages.length
                return chat.olderDone && el.scrollTop === 0 && all
            }
            for (let i = 0; i < 100000 && !done(); i++) {
                el.scrollTop = 0
                await frame()
            }
            return window.__desk.chat().listed.length
        }"""
    )
    assert loaded == MESSAGES
    long_tasks, seen = page.evaluate(
        """async (step) => {
            const el = document.querySelector('.chat-scroll')
            const frame = () => new Promise((resolve) => requestAnimationFrame(resolve))
            await frame()
            await frame()
            const tasks = []
            // The list is virtualised: every message must be rendered at some point on the way.
            const seen = new Set()
            const look = () => {
                const shown = el.querySelectorAll('.chat-messages .message')
                for (const m of shown) seen.add(m.dataset.id)
            }
            const observer = new PerformanceObserver((list) => {
                for (const entry of list.getEntries()) tasks.push(Math.round(entry.duration))
            })
            observer.observe({ type: 'longtask' })
            const bottom = () => el.scrollTop + el.clientHeight >= el.scrollHeight - 2
            for (let i = 0; i < 100000 && !bottom(); i++) {
                el.scrollBy(0, step)
                await frame()
                look()
            }
            for (let i = 0; i < 100000 && el.scrollTop > 0; i++) {
                el.scrollBy(0, -step)
                await frame()
                look()
            }
            await frame()
            observer.disconnect()
            return [tasks, seen.size]
        }""",
        SCROLL_STEP,
    )
    assert [t for t in long_tasks if t > LONG_TASK_MS] == [], long_tasks
    assert seen == MESSAGES
