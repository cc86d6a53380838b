"""Cards that read cleanly, in Chromium at 880x600: one header per answer however many steps it
took, naming the model once and no internal agent name; tool cards show a disclosure arrow that
turns when opened; tool names and buttons never wrap inside a word."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_chat import open_chat
from tests.support.chat import MODEL, create_session, publish
from tests.support.service import Service

pytestmark = pytest.mark.browser


def step(mid: str, n: int) -> list[tuple[str, dict[str, Any]]]:
    cid = f"call_{n}"
    args = {"command": f"echo step-{n} && make a-rather-long-target-name"}
    return [
        ("session.step.started", {"message_id": mid, "agent": "build", "model": MODEL}),
        ("session.tool.input.started", {"message_id": mid, "call_id": cid, "name": "shell"}),
        (
            "session.tool.called",
            {"message_id": mid, "call_id": cid, "name": "shell", "input": args},
        ),
        ("session.tool.success", {"message_id": mid, "call_id": cid, "content": "ok"}),
        ("session.step.ended", {"message_id": mid, "finish": "tool_calls"}),
    ]


def test_an_answer_of_seven_steps_has_one_header_naming_the_model_and_cards_open_visibly(
    page: Page, service: Service
) -> None:
    page.set_viewport_size({"width": 880, "height": 600})
    sid = create_session(service, "Cards")
    events: list[tuple[str, dict[str, Any]]] = [
        ("session.prompted", {"message_id": "u1", "text": "build it", "mode": "queue"}),
    ]
    for n in range(6):
        events += step(f"a{n}", n)
    events += [
        ("session.step.started", {"message_id": "a6", "agent": "build", "model": MODEL}),
        ("session.text", {"message_id": "a6", "text": "Built."}),
        ("session.step.ended", {"message_id": "a6", "finish": "stop"}),
    ]
    publish(service, sid, events)
    open_chat(page, service, sid)
    page.locator(".chat-scroll").evaluate("(el) => { el.scrollTop = 0 }")

    headers = page.locator(".msg-assistant .message-meta:visible")
    expect(headers).to_have_count(1)
    expect(headers.locator(".message-model")).to_have_text(MODEL["id"])  # then its time
    expect(page.locator(".chat-messages")).not_to_contain_text("build fake")

    card = page.locator(".part-tool").first
    summary = card.locator("summary")
    arrow = summary.evaluate("(s) => getComputedStyle(s, '::before').content")
    assert "▸" in arrow
    closed = summary.evaluate("(s) => getComputedStyle(s, '::before').transform")
    summary.click()
    expect(card).to_have_attribute("open", "")
    opened = summary.evaluate("(s) => getComputedStyle(s, '::before').transform")
    assert opened != closed

    name = card.locator(".tool-name")
    box = name.bounding_box()
    assert box is not None
    line = float(name.evaluate("(e) => parseFloat(getComputedStyle(e).lineHeight) || 20"))
    assert box["height"] < line * 1.5, box  # one line: "shell", never "shel/l"
