"""The message view in Chromium: live events, editing across windows, paging, resume."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, Route, expect

from tests.support.browser_chat import chat_state, message_ids, open_chat
from tests.support.chat import MODEL, assistant, create_session, publish, user
from tests.support.service import Service
from tests.support.wait import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.shared_service]


def test_published_events_appear_live_and_match_the_servers_projection(
    page: Page, service: Service
) -> None:
    sid = create_session(service)
    open_chat(page, service, sid)
    expect(page.locator(".chat-empty")).to_be_visible()
    publish(
        service,
        sid,
        [
            *user("u1", "What is in here?"),
            ("session.step.started", {"message_id": "a1", "agent": "build", "model": MODEL}),
            ("session.reasoning", {"message_id": "a1", "text": "Look first."}),
            (
                "session.tool.called",
                {"message_id": "a1", "call_id": "c1", "name": "shell", "input": {"command": "ls"}},
            ),
        ],
    )
    expect(page.locator(".msg-user")).to_have_text("What is in here?")
    tool = page.locator(".part-tool")
    expect(tool.locator(".tool-status")).to_have_attribute("aria-label", "Running")
    publish(
        service,
        sid,
        [
            (
                "session.tool.success",
                {"message_id": "a1", "call_id": "c1", "content": "README.md\nsrc"},
            ),
            (
                "session.text",
                {"message_id": "a1", "text": "Two entries:\n\n```python\nprint('hi')\n```"},
            ),
            ("session.step.ended", {"message_id": "a1", "finish": "stop"}),
        ],
    )
    expect(tool.locator(".tool-status")).to_have_attribute("aria-label", "Completed")
    expect(page.locator(".msg-assistant .markdown pre code .hljs-built_in")).to_have_text("print")
    # Tool parts and reasoning are collapsed; opening shows input and output.
    tool.locator("summary").click()
    expect(tool.locator(".tool-body")).to_contain_text("README.md")
    expect(tool.locator(".tool-body")).to_contain_text('"command": "ls"')
    expect(page.locator(".part-reasoning")).not_to_have_attribute("open", "")
    # What the page built from the stream is what the server projected.
    wait_until(
        lambda: (
            chat_state(page)["messages"] == service.request("GET", f"/api/session/{sid}/message")
        ),
        what="parity",
    )


def test_synthetic_messages_are_collapsed_behind_their_description(
    page: Page, service: Service
) -> None:
    sid = create_session(service)
    publish(
        service,
        sid,
        [
            (
                "session.synthetic",
                {
                    "message_id": "s1",
                    "text": "Background job finished: exit 0",
                    "description": "Job notice",
                },
            )
        ],
    )
    open_chat(page, service, sid)
    synthetic = page.locator(".msg-synthetic details")
    expect(synthetic.locator("summary")).to_have_text("Job notice")
    expect(synthetic.locator(".plain")).to_be_hidden()
    synthetic.locator("summary").click()
    expect(synthetic.locator(".plain")).to_have_text("Background job finished: exit 0")


def test_editing_a_message_in_one_window_updates_the_other(
    browser: Browser, service: Service
) -> None:
    sid = create_session(service)
    publish(service, sid, user("u1", "Summarise") + assistant("a1", "The first draft."))
    one = browser.new_context().new_page()
    two = browser.new_context().new_page()
    open_chat(one, service, sid)
    open_chat(two, service, sid)
    expect(two.locator(".msg-assistant .markdown")).to_have_text("The first draft.")

    one.get_by_role("button", name="Edit").click()
    one.get_by_label("Message text").fill("The **corrected** answer.")
    one.get_by_role("button", name="Save").click()

    expect(two.locator(".msg-assistant .markdown strong")).to_have_text("corrected")
    expect(one.locator(".msg-assistant .markdown")).to_have_text("The corrected answer.")
    stored = service.request("GET", f"/api/session/{sid}/message/a1")
    assert stored["content"] == [{"type": "text", "text": "The **corrected** answer."}]


def test_edit_is_offered_only_for_completed_assistant_messages(
    page: Page, service: Service
) -> None:
    sid = create_session(service)
    publish(service, sid, assistant("a1", "done") + assistant("a2", "still going", completed=False))
    open_chat(page, service, sid)
    expect(page.locator(".msg-assistant[data-id='a1'] .message-edit")).to_have_count(1)
    expect(page.locator(".msg-assistant[data-id='a2'] .message-edit")).to_have_count(0)
    service.request("POST", f"/api/test/session/{sid}/claim", {"claimed": True})
    expect(page.locator(".message-edit")).to_have_count(0)  # not while the session is busy


def test_latest_fifty_first_then_older_pages_on_scroll_keeping_the_view_still(
    page: Page, service: Service
) -> None:
    sid = create_session(service)
    events = []
    for n in range(130):
        events += user(f"u{n:03d}", f"message number {n}")
    publish(service, sid, events)
    open_chat(page, service, sid)
    assert message_ids(page) == [f"u{n:03d}" for n in range(80, 130)]

    scroller = page.locator(".chat-scroll")
    # Scroll near the top, which asks for the older page; the message on screen must stay put
    # when the page is prepended above it.
    # The older page is held back until the message on screen has been measured (the list
    # renders the rows for a new scroll position a frame later).
    held: list[Route] = []
    page.route("**/message?*before=*", lambda route: held.append(route))
    with page.expect_request("**/message?*before=*"):
        scroller.evaluate("(el) => { el.scrollTop = 300 }")
    # The route handler may run after the request event: pump Playwright's events a frame at a
    # time until it has.

    def is_held() -> bool:
        if not held:
            page.evaluate("() => new Promise((resolve) => requestAnimationFrame(resolve))")
        return bool(held)

    wait_until(is_held, interval=0, what="the older page's read held back")
    anchor, top_before = scroller.evaluate(
        """async (el) => {
            const frame = () => new Promise((resolve) => requestAnimationFrame(resolve))
            await frame()
            await frame()
            const view = el.getBoundingClientRect()
            const shown = [...el.querySelectorAll('.chat-messages .message')]
                .find((m) => m.getBoundingClientRect().top >= view.top)
            return [shown.dataset.id, shown.getBoundingClientRect().top]
        }"""
    )
    held[0].continue_()
    page.unroute("**/message?*before=*")
    page.wait_for_function("() => window.__desk.chat().listed.length >= 100")
    top_after = page.evaluate(
        """async (id) => {
            const frame = () => new Promise((resolve) => requestAnimationFrame(resolve))
            await frame()
            await frame()
            return document.querySelector(`[data-id='${id}']`).getBoundingClientRect().top
        }""",
        anchor,
    )
    assert abs(top_after - top_before) < 2, (anchor, top_before, top_after)
    assert message_ids(page)[-100:] == [f"u{n:03d}" for n in range(30, 130)]
    # Keep scrolling up until the beginning of the session.
    for _ in range(20):
        if chat_state(page)["olderDone"] and len(message_ids(page)) == 130:
            break
        scroller.evaluate("(el) => { el.scrollTop = 0; }")
        page.wait_for_function(
            "(n) => window.__desk.chat().listed.length > n || window.__desk.chat().olderDone",
            arg=len(message_ids(page)),
        )
    assert message_ids(page) == [f"u{n:03d}" for n in range(130)]
    scroller.evaluate("(el) => { el.scrollTop = 0; }")  # the marker shows only at the top
    expect(page.locator(".chat-older")).to_have_text("Beginning of the session")


@pytest.mark.fresh_service
def test_the_stream_resumes_after_a_service_restart_without_losing_events(
    page: Page, service: Service
) -> None:
    sid = create_session(service)
    publish(service, sid, user("u1", "before the restart"))
    streams: list[str] = []
    page.on("request", lambda r: streams.append(r.url) if "/api/event" in r.url else None)
    open_chat(page, service, sid)
    expect(page.locator(".msg-user")).to_have_text(["before the restart"])
    position = chat_state(page)["position"]

    service.kill()
    page.wait_for_function("() => window.__desk.state().connection !== 'connected'")
    service.start()
    # Published before the page's stream is back (or just after): either way it must arrive once.
    publish(service, sid, user("u2", "while the page was away") + assistant("a1", "and an answer"))
    expect(page.locator(".message")).to_have_count(3)
    assert message_ids(page) == ["u1", "u2", "a1"]
    assert any(f"after={position}" in url for url in streams), streams
