"""Nothing a person saw is lost: an answer's text reaches the log while it streams, a reload
mid-stream shows it at once, and after a kill -9 of the service the answer keeps what was on
screen and says it was cut off (Chromium against a real `desk serve` and the strict fake)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_chat import open_chat
from tests.support.chat import create_session
from tests.support.fake_provider import text_reply
from tests.support.fake_provider_thread import ThreadedFakeProvider
from tests.support.service import Service
from tests.support.wait import wait_until

pytestmark = pytest.mark.browser


def saved_text(service: Service, sid: str) -> str:
    """The text parts of the session's assistant messages, as the service has them."""
    texts = []
    for message in service.request("GET", f"/api/session/{sid}/message"):
        if message.get("type") == "assistant":
            texts += [p["text"] for p in message["content"] if p["type"] == "text"]
    return "".join(texts)


def assistant_messages(service: Service, sid: str) -> list[dict[str, Any]]:
    messages = service.request("GET", f"/api/session/{sid}/message")
    return [m for m in messages if m.get("type") == "assistant"]


def test_an_answer_on_screen_when_the_service_is_killed_keeps_its_text_and_says_it_was_cut(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    first = "The whole answer is on screen already."
    gate = fake_provider.gate()
    reply = text_reply(first, " A tail that never comes.")
    reply.gate, reply.gate_after = gate.event, 2  # the role chunk and `first` are out
    fake_provider.script(reply, text_reply("Picked up again."))
    sid = create_session(agent_service)
    open_chat(page, agent_service, sid)
    box = page.locator(".composer-input")
    box.fill("a long answer please")
    box.press("Enter")
    expect(page.locator(".msg-assistant .markdown")).to_have_text(first)

    # The stream is still open (held by the gate), yet the text is in the log.
    wait_until(lambda: saved_text(agent_service, sid) == first, timeout=10)
    [live] = assistant_messages(agent_service, sid)
    assert "completed" not in live["time"]
    assert live["content"] == [{"type": "text", "text": first, "partial": True}]

    # A reload mid-stream shows the text at once, before any further chunk.
    page.reload()
    page.wait_for_function("() => window.__desk.chat().state === 'ready'")
    expect(page.locator(".msg-assistant .markdown")).to_have_text(first)

    agent_service.kill()  # SIGKILL: no shutdown path runs
    page.wait_for_function("() => window.__desk.state().connection !== 'connected'")
    expect(page.locator(".msg-assistant .markdown")).to_have_text(first)
    gate.open()
    agent_service.start()
    page.wait_for_function("() => window.__desk.state().connection === 'connected'")

    cut = page.locator(".msg-assistant").first
    expect(cut.locator(".markdown")).to_have_text(first)
    expect(cut.locator(".message-cut")).to_contain_text("Cut off")
    # The turn goes on after the restart: the model gets the partial answer and continues.
    expect(page.locator(".msg-assistant .markdown").last).to_have_text("Picked up again.")
    page.reload()
    page.wait_for_function("() => window.__desk.chat().state === 'ready'")
    cut = page.locator(".msg-assistant").first
    expect(cut.locator(".markdown")).to_have_text(first)
    expect(cut.locator(".message-cut")).to_contain_text("Cut off")
    messages = assistant_messages(agent_service, sid)
    assert messages[0]["finish"] == "aborted"
    assert messages[0]["content"][0]["text"] == first
    resent = fake_provider.requests()[-1].body["messages"]
    assert any(m.get("role") == "assistant" and m.get("content") == first for m in resent)
    assert fake_provider.invalid_count == 0
