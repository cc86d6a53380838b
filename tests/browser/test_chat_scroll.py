"""A 10,000-message session in Chromium: every page loads on scroll and no task blocks the
page for more than 50 ms (PerformanceObserver 'longtask', measured in the page)."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page

from tests.browser.chat_helpers import (
    _test_hooks,
    assistant,
    create_session,
    open_chat,
    publish,
    user,
)
from tests.browser.helpers import Service

__all__ = ["_test_hooks"]

MESSAGES = 10_000
LONG_TASK_MS = 50


def history(count: int) -> list[tuple[str, dict[str, Any]]]:
    """Alternating questions and Markdown answers (one with a highlighted code block in ten)."""
    events: list[tuple[str, dict[str, Any]]] = []
    for n in range(count // 2):
        events += user(f"u{n:05d}", f"Question {n}: how does part {n} work?")
        body = f"Part **{n}** works like this:\n\n- first it reads\n- then it writes\n"
        if n % 10 == 0:
            body += f"\n```python\ndef part_{n}(x):\n    return x * {n}\n```\n"
        events += assistant(f"a{n:05d}", body)
    return events


def test_ten_thousand_messages_scroll_without_long_tasks(page: Page, service: Service) -> None:
    sid = create_session(service, "Long history")
    publish(service, sid, history(MESSAGES))
    open_chat(page, service, sid)
    page.evaluate(
        """() => {
            window.__longTasks = []
            new PerformanceObserver((list) => {
                for (const entry of list.getEntries()) window.__longTasks.push(Math.round(entry.duration))
            }).observe({ type: 'longtask', buffered: false })
        }"""
    )
    # Scroll up wheel-step by wheel-step, as a reader would, until all pages are in.
    scroller = page.locator(".chat-scroll")
    box = scroller.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    loaded = 0
    for _ in range(5000):
        state = page.evaluate(
            "() => ({ n: document.querySelectorAll('.chat-messages > .message').length,"
            " done: window.__desk.chat().olderDone, top: document.querySelector('.chat-scroll').scrollTop })"
        )
        loaded = state["n"]
        if state["done"] and state["top"] == 0:
            break
        page.mouse.wheel(0, -2400)
        page.wait_for_function("() => new Promise((r) => requestAnimationFrame(() => r(true)))")
    assert loaded == MESSAGES
    # ...and all the way down again.
    for _ in range(5000):
        at_bottom = scroller.evaluate("(el) => el.scrollTop + el.clientHeight >= el.scrollHeight - 2")
        if at_bottom:
            break
        page.mouse.wheel(0, 2400)
        page.wait_for_function("() => new Promise((r) => requestAnimationFrame(() => r(true)))")
    long_tasks = page.evaluate("() => window.__longTasks")
    assert [t for t in long_tasks if t > LONG_TASK_MS] == [], long_tasks
