"""Scroll that follows the person, in Chromium at 1280x800 and 880x600: a sent prompt brings
the view to the real bottom, a growing answer is followed while the reader is at the bottom and
not once they scrolled up, "↓ Latest" counts what arrived meanwhile and reaches the real bottom,
End does too, and "Beginning of the session" shows only at the top."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_chat import open_chat
from tests.support.chat import (
    LOAD_EVERY_PAGE_SCRIPT,
    assistant,
    create_session,
    history,
    publish,
)
from tests.support.service import Service

pytestmark = pytest.mark.browser

GAP = (
    "() => { const el = document.querySelector('.chat-scroll');"
    " return el.scrollHeight - el.scrollTop - el.clientHeight }"
)
AT_BOTTOM = f"() => ({GAP})() <= 1"


def scroll_up(page: Page) -> None:
    """The person scrolls up with the wheel, away from the bottom."""
    box = page.locator(".chat-scroll").bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -1500)
    page.wait_for_function(f"() => ({GAP})() > 600")


def long_answer(n: int) -> str:
    return "\n\n".join(f"Paragraph {i} of a long answer number {n}." for i in range(30))


@pytest.mark.parametrize("size", [(1280, 800), (880, 600)])
def test_the_view_follows_the_person_and_latest_counts_what_arrived_meanwhile(
    page: Page, service: Service, size: tuple[int, int]
) -> None:
    page.set_viewport_size({"width": size[0], "height": size[1]})
    sid = create_session(service, "Follow")
    publish(service, sid, history(120))
    open_chat(page, service, sid)
    page.wait_for_function(AT_BOTTOM)
    older = page.locator(".chat-older")
    expect(older).not_to_contain_text("Beginning of the session")
    latest = page.locator(".chat-latest")
    expect(latest).to_have_count(0)

    # At the bottom, an answer that grows (a long one arriving) is followed.
    publish(service, sid, assistant("a_grow", long_answer(0)))
    page.wait_for_function(AT_BOTTOM)

    # Scrolled up: new messages leave the view where the person reads, and are counted.
    scroll_up(page)
    top_before = page.evaluate("() => document.querySelector('.chat-scroll').scrollTop")
    expect(latest).to_have_text("↓ Latest")
    publish(service, sid, assistant("a_new1", long_answer(1)) + assistant("a_new2", "Short."))
    expect(latest).to_have_text("↓ Latest 2")
    # Where the person reads (a row measured meanwhile may move it by a few pixels).
    top_after = page.evaluate("() => document.querySelector('.chat-scroll').scrollTop")
    assert abs(top_after - top_before) < 20, (top_before, top_after)
    latest.click()
    page.wait_for_function(AT_BOTTOM)
    expect(latest).to_have_count(0)
    expect(page.locator(".chat-row").last).to_contain_text("Short.")

    # A prompt sent while scrolled up brings the new exchange into view.
    scroll_up(page)
    box = page.locator(".composer-input")
    box.fill("a new question")
    box.press("Enter")
    page.wait_for_function(AT_BOTTOM)
    expect(page.locator(".msg-user").last).to_have_text("a new question")
    expect(page.locator(".msg-user").last).to_be_in_viewport()

    # End in the list reaches the real bottom, even with rows measured late.
    scroll_up(page)
    page.locator(".chat-scroll").focus()
    page.locator(".chat-scroll").press("End")
    page.wait_for_function(AT_BOTTOM)

    # The beginning marker only at the top.
    page.evaluate(LOAD_EVERY_PAGE_SCRIPT)
    expect(older).to_have_text("Beginning of the session")
    page.locator(".chat-scroll").press("End")
    page.wait_for_function(AT_BOTTOM)
    expect(older).not_to_contain_text("Beginning of the session")
