"""The small things on each message, in Chromium: its durable time (short, full on hover, the
date and a day separator when it is not today), Copy answer, Cancel on a queued prompt, the
"edited" mark, a code block's language label, the turn's usage worded as what was sent, and a
subagent's session linking to its parent with its task labelled as the parent's. Colours are
read in both themes."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from tests.support.axe import described, violations
from tests.support.browser_chat import open_chat
from tests.support.chat import MODEL, assistant, create_session, publish, user
from tests.support.fake_provider import text_reply
from tests.support.fake_provider_thread import ThreadedFakeProvider
from tests.support.service import Service
from tests.support.wait import wait_until

pytestmark = pytest.mark.browser

# Contrast of an element's text against the first opaque background behind it (WCAG).
CONTRAST = """(element) => {
    const rgb = (colour) => {
        const values = colour.match(/[0-9.]+/g).map(Number)
        const scale = colour.startsWith('color(') ? 255 : 1
        return { c: values.slice(0, 3).map((v) => v * scale), a: values[3] ?? 1 }
    }
    const lum = ([r, g, b]) => {
        const f = (v) => {
            const c = v / 255
            return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
        }
        return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b)
    }
    let bg = null
    for (let node = element; node && !bg; node = node.parentElement) {
        const colour = rgb(getComputedStyle(node).backgroundColor)
        if (colour.a === 1) bg = colour.c
    }
    bg ??= rgb(getComputedStyle(document.body).backgroundColor).c
    const fg = lum(rgb(getComputedStyle(element).color).c)
    const back = lum(bg)
    return (Math.max(fg, back) + 0.05) / (Math.min(fg, back) + 0.05)
}"""


# The full local date and time of an epoch-ms time, as the page formats it.
FULL = (
    "(ms) => new Intl.DateTimeFormat(undefined, {dateStyle: 'full', timeStyle: 'medium'})"
    ".format(ms)"
)


def contrast(locator: Locator) -> float:
    return float(locator.evaluate(CONTRAST))


def ended(message_id: str, tokens: dict[str, int]) -> tuple[str, dict[str, Any]]:
    return ("session.step.ended", {"message_id": message_id, "finish": "stop", "tokens": tokens})


def stored(service: Service, sid: str, mid: str) -> dict[str, Any]:
    return service.request("GET", f"/api/session/{sid}/message/{mid}")  # type: ignore[no-any-return]


def local_iso(page: Page, ms: int) -> str:
    return str(page.evaluate("(ms) => new Date(ms).toISOString()", ms))


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_each_message_shows_its_durable_time_short_with_the_full_date_on_hover(
    page: Page, service: Service, theme: str
) -> None:
    page.emulate_media(color_scheme=theme)  # type: ignore[arg-type]
    sid = create_session(service)
    publish(service, sid, user("u1", "When?") + assistant("a1", "Now."))
    open_chat(page, service, sid)
    created_user = stored(service, sid, "u1")["time"]["created"]
    created_answer = stored(service, sid, "a1")["time"]["created"]

    stamp = page.locator(".message-stamp[data-for='u1'] time")
    expect(stamp).to_have_attribute("datetime", local_iso(page, created_user))
    short = page.evaluate(
        "(ms) => new Intl.DateTimeFormat(undefined, {hour: '2-digit', minute: '2-digit'})"
        ".format(ms)",
        created_user,
    )
    expect(stamp).to_have_text(short)
    year = str(datetime.fromtimestamp(created_user / 1000, UTC).year)
    expect(stamp).to_have_attribute("title", f"Sent {page.evaluate(FULL, created_user)}")
    assert year in (stamp.get_attribute("title") or "")
    answer = page.locator(".msg-assistant[data-id='a1'] .message-meta time")
    expect(answer).to_have_attribute("datetime", local_iso(page, created_answer))
    # All of today: no day separator, and the bubble's own text is only the prompt.
    expect(page.locator(".day-separator")).to_have_count(0)
    expect(page.locator(".msg-user")).to_have_text("When?")
    assert contrast(stamp) >= 4.5
    assert contrast(answer) >= 4.5


def test_on_a_later_day_the_messages_show_their_date_and_a_day_separator_not_the_clocks(
    page: Page, service: Service
) -> None:
    sid = create_session(service)
    publish(service, sid, user("u1", "Yesterday's question") + assistant("a1", "An answer."))
    created = stored(service, sid, "u1")["time"]["created"]
    # The page's clock says three days later: the times shown stay the messages' own.
    later = datetime.fromtimestamp(created / 1000, UTC) + timedelta(days=3)
    page.clock.set_fixed_time(later)
    open_chat(page, service, sid)
    separator = page.locator(".day-separator")
    expect(separator).to_have_count(1)
    label = page.evaluate(
        "(ms) => new Intl.DateTimeFormat(undefined, {weekday: 'long', day: 'numeric', "
        "month: 'long'}).format(ms)",
        created,
    )
    expect(separator).to_have_text(label)
    stamp = page.locator(".message-stamp[data-for='u1'] time")
    expect(stamp).to_have_attribute("datetime", local_iso(page, created))
    day = page.evaluate(
        "(ms) => new Intl.DateTimeFormat(undefined, {day: 'numeric', month: 'short'}).format(ms)",
        created,
    )
    expect(stamp).to_contain_text(str(day))
    # The separator sits above the first message.
    first_row = page.locator(".chat-row").first
    expect(first_row.locator(".day-separator + .msg-user")).to_have_count(1)


def test_copy_answer_copies_the_markdown_of_every_step_and_says_copied(
    page: Page, service: Service
) -> None:
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=service.url)
    sid = create_session(service)
    publish(
        service,
        sid,
        [
            *user("u1", "Explain"),
            ("session.step.started", {"message_id": "a1", "agent": "build", "model": MODEL}),
            ("session.text", {"message_id": "a1", "text": "First I **look**."}),
            (
                "session.tool.called",
                {"message_id": "a1", "call_id": "c1", "name": "read", "input": {"path": "x"}},
            ),
            ("session.tool.success", {"message_id": "a1", "call_id": "c1", "content": "x"}),
            ("session.step.ended", {"message_id": "a1", "finish": "tool_calls"}),
            ("session.step.started", {"message_id": "a2", "agent": "build", "model": MODEL}),
            ("session.text", {"message_id": "a2", "text": "Then:\n\n```sh\nls -l\n```"}),
            ("session.step.ended", {"message_id": "a2", "finish": "stop"}),
            *user("u2", "And?"),
            *assistant("a3", "Done."),
        ],
    )
    open_chat(page, service, sid)
    buttons = page.get_by_role("button", name="Copy answer")
    expect(buttons).to_have_count(2)  # one per answer, under its last step
    expect(page.locator(".chat-row:has(.msg-assistant[data-id='a1']) .copy-answer")).to_have_count(
        0
    )
    button = page.locator(".chat-row:has(.msg-assistant[data-id='a2']) .copy-answer")
    expect(button).to_be_visible()  # without hovering
    button.click()
    expect(button).to_have_text("Copied")
    expect(page.get_by_role("status").filter(has_text="Answer copied")).to_have_count(1)
    copied = page.evaluate("() => navigator.clipboard.readText()")
    assert copied == "First I **look**.\n\nThen:\n\n```sh\nls -l\n```"
    expect(button).to_have_text("Copy answer", timeout=5000)


def test_cancel_removes_a_queued_prompt_before_the_model_gets_it(
    browser: Browser, agent_service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    gate = fake_provider.gate()
    reply = text_reply("First ", "answer.")
    reply.gate, reply.gate_after = gate.event, 2
    fake_provider.script(reply, text_reply("Third answer."))
    sid = create_session(agent_service)
    page = browser.new_context().new_page()
    other = browser.new_context().new_page()
    open_chat(page, agent_service, sid)
    open_chat(other, agent_service, sid)
    box = page.locator(".composer-input")
    box.fill("first")
    box.press("Enter")
    expect(page.locator(".msg-assistant .markdown")).to_have_text("First")
    box.fill("second, a mistake")
    box.press("Enter")
    queued = page.locator(".msg-user[data-queued='true']")
    expect(queued).to_have_count(1)
    expect(queued.locator(".message-queued")).to_contain_text("Queued")
    found = violations(page)
    assert not found, described({"queued prompt": found})
    # The other window, reloaded, knows the prompt still waits (the server says so) and
    # cancels it.
    other.reload()
    other.locator(f".session-item[data-id='{sid}'] .session-open").click()
    waiting = other.locator(".msg-user[data-queued='true']")
    expect(waiting).to_have_text(re.compile("^second, a mistake"))

    waiting.get_by_role("button", name="Cancel this queued prompt").click()

    expect(page.locator(".msg-user")).to_have_text(["first"])
    expect(other.locator(".msg-user")).to_have_text(["first"])  # the durable event, live
    box.fill("third")
    box.press("Enter")
    gate.open()
    expect(page.locator(".msg-assistant .markdown")).to_have_text(
        ["First answer.", "Third answer."], timeout=15000
    )
    expect(page.locator(".msg-user")).to_have_text(["first", "third"])
    sent = [
        [m["content"] for m in r.body["messages"] if m["role"] == "user"]
        for r in fake_provider.requests()
    ]
    assert sent == [["first"], ["first", "third"]]
    # After a reload the cancelled prompt stays gone.
    page.reload()
    page.locator(f".session-item[data-id='{sid}'] .session-open").click()
    expect(page.locator(".msg-user")).to_have_text(["first", "third"])
    assert fake_provider.invalid_count == 0


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_an_edited_answer_is_marked_edited_with_both_times_on_hover(
    page: Page, service: Service, theme: str
) -> None:
    page.emulate_media(color_scheme=theme)  # type: ignore[arg-type]
    sid = create_session(service)
    publish(service, sid, user("u1", "Summarise") + assistant("a1", "The first draft."))
    open_chat(page, service, sid)
    expect(page.locator(".message-edited")).to_have_count(0)
    page.get_by_role("button", name="Edit").click()
    page.get_by_label("Message text").fill("The corrected answer.")
    page.get_by_role("button", name="Save").click()

    mark = page.locator(".msg-assistant[data-id='a1'] .message-edited")
    expect(mark).to_contain_text("edited")
    time = stored(service, sid, "a1")["time"]
    assert time["edited"] >= time["created"]
    title = (
        f"Edited {page.evaluate(FULL, time['edited'])}; "
        f"first written {page.evaluate(FULL, time['created'])}"
    )
    expect(mark).to_have_attribute("title", title)
    assert contrast(mark) >= 4.5
    page.reload()
    page.locator(f".session-item[data-id='{sid}'] .session-open").click()
    expect(page.locator(".msg-assistant[data-id='a1'] .message-edited")).to_have_attribute(
        "title", title
    )


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_code_blocks_show_their_language_beside_copy_as_plain_text(
    page: Page, service: Service, theme: str
) -> None:
    page.emulate_media(color_scheme=theme)  # type: ignore[arg-type]
    sid = create_session(service)
    text = (
        "```python\nprint('hi')\n```\n\n```\nno language\n```\n\n"
        "```<img src=x onerror=alert(1)>\nhostile\n```"
    )
    publish(service, sid, user("u1", "code") + assistant("a1", text))
    open_chat(page, service, sid)
    blocks = page.locator(".msg-assistant .markdown pre")
    expect(blocks).to_have_count(3)
    label = blocks.nth(0).locator(".code-tools .code-lang")
    expect(label).to_have_text("python")
    expect(blocks.nth(0).locator(".code-tools .code-lang + .code-copy")).to_have_attribute(
        "aria-label", "Copy python code"
    )
    expect(blocks.nth(1).locator(".code-lang")).to_have_count(0)
    expect(blocks.nth(2).locator(".code-lang")).to_have_count(0)
    expect(page.locator(".msg-assistant img")).to_have_count(0)
    assert contrast(label) >= 4.5


def test_the_turns_usage_says_what_was_sent_over_its_steps(page: Page, service: Service) -> None:
    sid = create_session(service)
    steps: list[tuple[str, dict[str, Any]]] = []
    for n, sent in enumerate((20_000, 22_000, 24_000), start=1):
        mid = f"a{n}"
        steps += [
            ("session.step.started", {"message_id": mid, "agent": "build", "model": MODEL}),
            ("session.text", {"message_id": mid, "text": f"step {n}"}),
            ended(mid, {"input": sent, "output": 400, "reasoning": 0, "cache_read": 0}),
        ]
    publish(service, sid, user("u1", "Work") + steps)
    open_chat(page, service, sid)
    usage = page.locator(".turn-usage")
    expect(usage).to_have_count(1)
    expect(usage).to_have_text("3 steps · 66k tokens sent · 1.2k out")
    title = usage.get_attribute("title") or ""
    assert "66,000 tokens sent to the model over this turn's 3 requests" in title
    assert "meter in the header shows how full the context is" in title
    assert " in ·" not in (usage.text_content() or "")


def test_a_subagents_session_links_to_its_parent_and_shows_the_task_as_the_parents(
    page: Page, service: Service
) -> None:
    parent = create_session(service, title="Refactor the parser")
    child = str(
        service.request(
            "POST",
            "/api/session",
            {"title": "count files", "directory": "/tmp", "parent_id": parent},
        )["id"]
    )
    task = "Count the Python files under src/ and report the number."
    publish(
        service,
        child,
        [
            (
                "session.prompted",
                {"message_id": "t1", "text": task, "mode": "queue", "from_session": parent},
            ),
            *assistant("a1", "There are 12."),
            *user("u2", "Thanks, and tests/?"),
        ],
    )
    open_chat(page, service, child)
    back = page.locator(".chat-header + .chat-parent")
    expect(back).to_have_text("Helper of Refactor the parser")
    line = back.bounding_box()
    assert line is not None
    assert line["height"] < 24, line  # one line, whatever the header holds
    card = page.locator(".msg-task[data-id='t1']")
    expect(card.locator(".task-from")).to_have_text("Task from Refactor the parser")
    expect(card.locator(".plain")).to_have_text(task)
    # Not shown as the person's message; the person's own prompt still is.
    expect(page.locator(".msg-user")).to_have_text(["Thanks, and tests/?"])
    background = card.evaluate("(e) => getComputedStyle(e).borderLeftStyle")
    assert background == "solid"
    card.get_by_role("button", name="Refactor the parser").click()
    wait_until(
        lambda: page.evaluate("() => window.__desk.chat().active") == parent, what="parent open"
    )
    expect(page.locator(".chat-title")).to_have_text("Refactor the parser")
    expect(page.locator(".chat-parent")).to_have_count(0)
    page.locator(f".session-item[data-id='{child}'] .session-open").click()
    page.locator(".chat-parent").get_by_role("button").click()
    wait_until(
        lambda: page.evaluate("() => window.__desk.chat().active") == parent, what="back again"
    )


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_times_marks_tasks_and_copy_have_no_serious_accessibility_violations(
    page: Page, service: Service, theme: str
) -> None:
    page.emulate_media(color_scheme=theme)  # type: ignore[arg-type]
    parent = create_session(service, title="Parent work")
    child = str(
        service.request(
            "POST", "/api/session", {"title": "helper", "directory": "/tmp", "parent_id": parent}
        )["id"]
    )
    publish(
        service,
        child,
        [
            (
                "session.prompted",
                {"message_id": "t1", "text": "Do it.", "mode": "queue", "from_session": parent},
            ),
            *assistant("a1", "Done:\n\n```python\nx = 1\n```"),
            ended("a1", {"input": 900, "output": 30}),
            (
                "session.message.content.updated",
                {"message_id": "a1", "content": [{"type": "text", "text": "Done, edited."}]},
            ),
            *user("u2", "Thanks"),
        ],
    )
    created = stored(service, child, "t1")["time"]["created"]
    page.clock.set_fixed_time(datetime.fromtimestamp(created / 1000, UTC) + timedelta(days=2))
    open_chat(page, service, child)
    expect(page.locator(".day-separator")).to_have_count(1)
    expect(page.locator(".message-edited")).to_have_count(1)
    expect(page.locator(".msg-task")).to_have_count(1)
    expect(page.locator(".copy-answer")).to_have_count(1)
    found = violations(page)
    assert not found, described({"message details": found})


@pytest.mark.parametrize("size", [(900, 600), (880, 600)])
def test_in_a_small_window_times_and_copy_answer_stay_on_one_line_beside_the_actions(
    page: Page, service: Service, size: tuple[int, int]
) -> None:
    page.set_viewport_size({"width": size[0], "height": size[1]})
    sid = create_session(service)
    publish(service, sid, user("u1", "A question") + assistant("a1", "An answer."))
    open_chat(page, service, sid)
    stamp = page.locator(".message-stamp[data-for='u1']")
    copy = page.get_by_role("button", name="Copy answer")
    expect(stamp).to_be_in_viewport()
    expect(copy).to_be_in_viewport()
    for element in (stamp, copy, page.locator(".msg-assistant .message-meta time")):
        box = element.bounding_box()
        assert box is not None
        assert box["height"] < 20, box  # never wrapped
    # The time sits on the line of the message's actions, not on a line of its own.
    actions = page.locator(".message-actions[data-for='u1']").bounding_box()
    line = stamp.bounding_box()
    assert actions is not None
    assert line is not None
    assert abs((actions["y"] + actions["height"] / 2) - (line["y"] + line["height"] / 2)) < 6
