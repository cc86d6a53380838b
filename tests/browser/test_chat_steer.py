"""A prompt steered into a running turn (Ctrl+Enter), in Chromium: it says it is read at the
agent's next step (a queued one says it waits for the turn's end), keeps saying so after a
reload, can be cancelled, and reaches the model in the same turn."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect

from tests.support.browser_chat import open_chat
from tests.support.chat import create_session
from tests.support.fake_provider import Call, text_reply, tool_call_reply
from tests.support.fake_provider_thread import ThreadedFakeProvider
from tests.support.service import Service

pytestmark = pytest.mark.browser

STEERING = "Steering: read at the agent's next step"
QUEUED = "Queued: sent when the current turn ends"


def test_a_steered_prompt_says_it_is_read_at_the_next_step_not_queued(
    browser: Browser, agent_service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    gate = fake_provider.gate()
    # A step that calls a tool: the turn goes on to a next step, which reads the steer.
    first = tool_call_reply(Call("call_a", "read", {"path": "a.txt"}), text="Looking at a.")
    first.gate, first.gate_after = gate.event, 1
    fake_provider.script(first, text_reply("And b."), text_reply("Later."))
    sid = create_session(agent_service)
    page = browser.new_context().new_page()
    open_chat(page, agent_service, sid)
    box = page.locator(".composer-input")
    box.fill("look at a")
    box.press("Enter")
    expect(page.locator(".msg-assistant .markdown")).to_have_text("Looking at a.")

    box.fill("look at b too")
    box.press("Control+Enter")
    steered = page.locator(".msg-user", has_text="look at b too")
    expect(steered.locator(".message-queued > span")).to_have_text(STEERING)
    expect(steered.get_by_role("button", name="Cancel this steering prompt")).to_be_visible()
    box.fill("then tidy up")
    box.press("Enter")
    queued = page.locator(".msg-user", has_text="then tidy up")
    expect(queued.locator(".message-queued > span")).to_have_text(QUEUED)
    expect(steered.locator(".message-queued > span")).to_have_text(STEERING)

    # After a reload the server's message says how each was sent.
    page.reload()
    page.locator(f".session-item[data-id='{sid}'] .session-open").click()
    expect(steered.locator(".message-queued > span")).to_have_text(STEERING)
    expect(queued.locator(".message-queued > span")).to_have_text(QUEUED)

    gate.open()
    expect(page.locator(".msg-assistant .markdown")).to_have_text(
        ["Looking at a.", "And b.", "Later."], timeout=15000
    )
    expect(page.locator(".message-queued")).to_have_count(0)
    sent = [
        [m["content"] for m in r.body["messages"] if m["role"] == "user"]
        for r in fake_provider.requests()
    ]
    # The steer reached the model at the turn's next step, the queued prompt after the turn.
    assert sent[1] == ["look at a", "look at b too"]
    assert sent[2] == ["look at a", "look at b too", "then tidy up"]
    assert fake_provider.invalid_count == 0
