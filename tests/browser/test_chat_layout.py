"""Room to work, in Chromium: a splitter between the chat and the terminals, dragged and
remembered across a reload; a header button that hides the terminals (remembered too); and a
stacked layout at 880x600 whose message list is tall enough to read; and a sessions sidebar that
never scrolls sideways (its resizer sits inside its edge) at 1280x800 and 880x600."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_chat import open_chat
from tests.support.chat import create_session, history, publish
from tests.support.service import Service

pytestmark = pytest.mark.browser


def width(page: Page, selector: str) -> float:
    box = page.locator(selector).bounding_box()
    assert box is not None
    return float(box["width"])


def test_the_splitter_is_dragged_and_remembered_and_the_terminals_hide(
    page: Page, service: Service
) -> None:
    page.set_viewport_size({"width": 1280, "height": 800})
    sid = create_session(service, "Layout")
    open_chat(page, service, sid)
    bar = page.locator(".app-splitter")
    expect(bar).to_be_visible()
    before = width(page, "#chat-area")
    box = bar.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + 3, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + 200, box["y"] + box["height"] / 2, steps=5)
    page.mouse.up()
    dragged = width(page, "#chat-area")
    assert dragged > before + 150, (before, dragged)

    page.reload()
    page.wait_for_function("() => window.__desk?.chat().state === 'ready'")
    assert abs(width(page, "#chat-area") - dragged) < 8

    toggle = page.get_by_role("button", name="Hide terminals")
    toggle.click()
    expect(page.locator("#terminal-area")).to_be_hidden()
    expect(bar).to_be_hidden()
    assert width(page, "#chat-area") > dragged + 200
    page.reload()
    page.wait_for_function("() => window.__desk?.chat().state === 'ready'")
    expect(page.locator("#terminal-area")).to_be_hidden()
    page.get_by_role("button", name="Show terminals").click()
    expect(page.locator("#terminal-area")).to_be_visible()


def test_at_880x600_the_stacked_chat_leaves_a_list_tall_enough_to_read(
    page: Page, service: Service
) -> None:
    page.set_viewport_size({"width": 880, "height": 600})
    sid = create_session(service, "Stacked")
    publish(service, sid, history(20))
    open_chat(page, service, sid)
    expect(page.locator(".app-splitter")).to_have_attribute("aria-orientation", "horizontal")
    box = page.locator(".chat-scroll").bounding_box()
    assert box is not None
    assert box["height"] >= 200, box
    terminals = page.locator("#terminal-area").bounding_box()
    assert terminals is not None
    assert terminals["height"] >= 120, terminals


SIDEWAYS = """() => {
    const sidebar = document.querySelector('#sessions-sidebar')
    return [sidebar.scrollWidth, sidebar.clientWidth]
}"""


@pytest.mark.parametrize("size", [(1280, 800), (880, 600)])
def test_the_sidebar_never_scrolls_sideways(
    page: Page, service: Service, size: tuple[int, int]
) -> None:
    page.set_viewport_size({"width": size[0], "height": size[1]})
    long = "A session whose title is much longer than any sidebar is wide, " * 3
    create_session(service, long.strip(), "/tmp")
    sid = create_session(service, "Layout")
    open_chat(page, service, sid)
    sidebar = page.locator("#sessions-sidebar")
    expect(sidebar).to_be_visible()
    expect(page.locator(".sidebar-resizer")).to_be_attached()
    scroll, client = page.evaluate(SIDEWAYS)
    assert scroll <= client, (scroll, client)
    # The resizer still sits at the sidebar's edge, where the pointer takes it.
    edge = sidebar.bounding_box()
    handle = page.locator(".sidebar-resizer").bounding_box()
    assert edge is not None
    assert handle is not None
    assert edge["x"] + edge["width"] - 8 <= handle["x"] < edge["x"] + edge["width"]
