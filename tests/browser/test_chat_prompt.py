"""The prompt UI in Chromium against a real `desk serve` whose agent talks to the strict fake
provider: sending, streaming, tool cards, drafts, interrupt, the retry banner, token usage,
the prompt box's height as the window narrows and widens, and a kill -9 of the service in the
middle of a conversation."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.support.browser_chat import open_chat
from tests.support.chat import create_session
from tests.support.fake_provider import Call, error_reply, text_reply, tool_call_reply
from tests.support.fake_provider_thread import Gate, ThreadedFakeProvider
from tests.support.service import Service
from tests.support.wait import wait_until

pytestmark = pytest.mark.browser


def prompt_box(page: Page) -> Locator:
    return page.locator(".composer-input")


def send(page: Page, text: str) -> None:
    box = prompt_box(page)
    box.fill(text)
    box.press("Enter")


def session_status(page: Page, sid: str) -> str:
    for s in page.evaluate("() => window.__desk.chat().sessions"):
        if s["id"] == sid:
            return str(s["status"])
    raise AssertionError(f"no session {sid}")


def wait_status(page: Page, sid: str, status: str) -> None:
    page.wait_for_function(
        "([id, status]) => window.__desk.chat().sessions"
        ".some((s) => s.id === id && s.status === status)",
        arg=[sid, status],
    )


def server_messages(service: Service, sid: str) -> list[dict[str, Any]]:
    return list(service.request("GET", f"/api/session/{sid}/message"))


# Records every data-status a tool card takes (a MutationObserver sees each render's value).
RECORD_TOOL_STATES = """() => {
    window.__toolStates = []
    const seen = () => {
        const card = document.querySelector('.part-tool')
        const status = card?.dataset.status
        const states = window.__toolStates
        if (status && states[states.length - 1] !== status) states.push(status)
    }
    new MutationObserver(seen).observe(document.body,
        { subtree: true, childList: true, attributes: true, attributeFilter: ['data-status'] })
}"""


def test_enter_sends_and_the_answer_streams_in_before_the_stream_ends_then_shows_once(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    gate = fake_provider.gate()
    reply = text_reply("Hello ", "from the ", "stream.")
    reply.gate, reply.gate_after = gate.event, 3  # hold after "Hello ", "from the "
    fake_provider.script(reply)
    sid = create_session(agent_service)
    open_chat(page, agent_service, sid)

    send(page, "Say hello")
    expect(page.locator(".msg-user")).to_have_text("Say hello")
    answer = page.locator(".msg-assistant")
    expect(answer.locator(".markdown")).to_have_text("Hello from the")
    # Held mid-stream: the text on screen came from the live deltas, not a durable part.
    expect(answer).to_have_attribute("aria-busy", "true")
    assistant = [m for m in server_messages(agent_service, sid) if m["type"] == "assistant"]
    assert [p for p in assistant[0]["content"] if p["type"] == "text"] == []

    # Marks on the rendered nodes: the durable text must replace the live one in place.
    page.evaluate(
        "() => document.querySelectorAll('.chat-messages .message').forEach((m) => m.__kept = true)"
    )

    gate.open()
    expect(answer).not_to_have_attribute("aria-busy", "true")
    kept = page.evaluate(
        "() => [...document.querySelectorAll('.chat-messages .message')].map((m) => !!m.__kept)"
    )
    assert kept == [True, True]  # no message (nor the list) was rebuilt
    expect(answer.locator(".markdown")).to_have_count(1)
    expect(answer.locator(".markdown")).to_have_text("Hello from the stream.")
    assert page.locator(".chat-messages").inner_text().count("Hello from the stream.") == 1
    assert prompt_box(page).input_value() == ""
    assert fake_provider.invalid_count == 0


def test_shift_enter_makes_a_new_line_and_sends_nothing(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    fake_provider.script(text_reply("Two lines received."))
    sid = create_session(agent_service)
    open_chat(page, agent_service, sid)
    box = prompt_box(page)
    box.click()
    page.keyboard.type("line one")
    page.keyboard.press("Shift+Enter")
    page.keyboard.type("line two")
    assert box.input_value() == "line one\nline two"
    # Enter now sends both lines as one prompt: the Shift+Enter sent nothing.
    page.keyboard.press("Enter")
    expect(page.locator(".msg-assistant .markdown")).to_have_text("Two lines received.")
    expect(page.locator(".msg-user")).to_have_count(1)
    expect(page.locator(".msg-user")).to_have_text("line one\nline two")
    prompts = [m["text"] for m in server_messages(agent_service, sid) if m["type"] == "user"]
    assert prompts == ["line one\nline two"]
    assert len(fake_provider.requests()) == 1
    assert fake_provider.invalid_count == 0


def test_a_shell_tool_card_shows_its_live_state_then_the_output_and_exit_code(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    gate = fake_provider.gate()
    call = tool_call_reply(Call("call_1", "shell", {"command": "echo hi-$((6*7))"}))
    call.gate, call.gate_after = gate.event, 3  # the call's name is out, its arguments are not
    fake_provider.script(call, text_reply("done"))
    sid = create_session(agent_service)
    open_chat(page, agent_service, sid)
    page.evaluate(RECORD_TOOL_STATES)

    send(page, "Run it")
    card = page.locator(".part-tool")
    expect(card).to_have_attribute("data-status", "streaming")
    expect(card.locator(".tool-status")).to_have_attribute("aria-label", "Preparing")
    expect(card.locator(".tool-name")).to_have_text("shell")
    gate.open()

    expect(card).to_have_attribute("data-status", "completed")
    expect(card.locator(".tool-brief")).to_have_text("echo hi-$((6*7))")
    expect(card.locator(".tool-exit")).to_have_text("exit 0")
    card.locator(".tool-name").click()  # the summary's middle holds "Open terminal"
    expect(card.locator(".tool-body")).to_contain_text("hi-42")
    expect(page.locator(".msg-assistant .markdown")).to_have_text("done")
    states = page.evaluate("() => window.__toolStates")
    assert states[0] == "streaming", states
    assert states[-1] == "completed", states
    assert set(states) <= {"streaming", "running", "completed"}, states
    assert fake_provider.invalid_count == 0


def test_the_draft_survives_a_reload_a_service_restart_and_a_session_switch(
    page: Page, service: Service
) -> None:
    first = create_session(service, "First")
    second = create_session(service, "Second")
    open_chat(page, service, first)
    prompt_box(page).fill("half a thought\nabout the first")

    page.reload()
    page.wait_for_function("() => window.__desk.chat().active !== null")
    expect(prompt_box(page)).to_have_value("half a thought\nabout the first")

    service.stop()
    page.wait_for_function("() => window.__desk.state().connection !== 'connected'")
    service.start()
    page.wait_for_function("() => window.__desk.state().connection === 'connected'")
    page.reload()
    page.wait_for_function("() => window.__desk.chat().active !== null")
    expect(prompt_box(page)).to_have_value("half a thought\nabout the first")

    page.locator(f".session-item[data-id='{second}'] .session-open").click()
    expect(page.locator(f".chat[data-session='{second}']")).to_be_visible()
    expect(prompt_box(page)).to_have_value("")
    prompt_box(page).fill("the second's draft")
    page.locator(f".session-item[data-id='{first}'] .session-open").click()
    expect(prompt_box(page)).to_have_value("half a thought\nabout the first")

    # Sent and accepted (202): the draft is gone, here and after a reload.
    prompt_box(page).press("Enter")
    expect(page.locator(".msg-user")).to_have_text("half a thought\nabout the first")
    expect(prompt_box(page)).to_have_value("")
    page.reload()
    page.wait_for_function("() => window.__desk.chat().active !== null")
    expect(page.locator(f".chat[data-session='{first}']")).to_be_visible()
    expect(prompt_box(page)).to_have_value("")
    page.locator(f".session-item[data-id='{second}'] .session-open").click()
    expect(prompt_box(page)).to_have_value("the second's draft")


def test_a_failed_send_keeps_the_draft_and_says_why_inline(page: Page, service: Service) -> None:
    sid = create_session(service)
    open_chat(page, service, sid)
    service.stop()
    page.wait_for_function("() => window.__desk.state().connection !== 'connected'")
    send(page, "into the void")
    expect(page.locator(".composer-error")).to_contain_text(
        "Not sent: The Desk service is unreachable"
    )
    expect(prompt_box(page)).to_have_value("into the void")
    expect(prompt_box(page)).to_have_attribute("aria-invalid", "true")

    service.start()
    page.wait_for_function("() => window.__desk.state().connection === 'connected'")
    prompt_box(page).press("Enter")
    expect(page.locator(".msg-user")).to_have_text("into the void")
    expect(page.locator(".composer-error")).to_have_count(0)
    expect(prompt_box(page)).to_have_value("")


def test_after_a_kill_9_of_the_service_the_conversation_is_shown_and_a_new_prompt_is_answered(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    fake_provider.script(text_reply("First answer."), text_reply("Second answer."))
    sid = create_session(agent_service)
    open_chat(page, agent_service, sid)
    send(page, "first question")
    expect(page.locator(".msg-assistant .markdown")).to_have_text("First answer.")
    wait_status(page, sid, "idle")

    agent_service.kill()
    page.wait_for_function("() => window.__desk.state().connection !== 'connected'")
    agent_service.start()
    page.wait_for_function("() => window.__desk.state().connection === 'connected'")
    expect(page.locator(".msg-user")).to_have_text(["first question"])

    send(page, "second question")
    expect(page.locator(".msg-assistant .markdown")).to_have_text(
        ["First answer.", "Second answer."]
    )
    page.reload()
    page.wait_for_function("() => window.__desk.chat().state === 'ready'")
    expect(page.locator(".msg-user")).to_have_text(["first question", "second question"])
    expect(page.locator(".msg-assistant .markdown")).to_have_text(
        ["First answer.", "Second answer."]
    )
    assert len(fake_provider.requests()) == 2
    assert fake_provider.invalid_count == 0


def held_answer(
    page: Page, service: Service, fake: ThreadedFakeProvider, first: str
) -> tuple[str, Gate]:
    """A session in the page whose answer streamed `first` and is held there by the gate."""
    gate = fake.gate()
    reply = text_reply(first, "and the rest of a long answer")
    reply.gate, reply.gate_after = gate.event, 2  # the role chunk and `first` are out
    fake.script(reply)
    sid = create_session(service)
    open_chat(page, service, sid)
    send(page, "take your time")
    expect(page.locator(".msg-assistant .markdown")).to_have_text(first.strip())
    return sid, gate


def test_the_stop_button_interrupts_a_held_stream_and_the_turn_ends_interrupted(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    sid, gate = held_answer(page, agent_service, fake_provider, "Thinking about ")
    stop = page.locator(".composer-stop")
    expect(stop).to_be_visible()
    wait_status(page, sid, "busy")

    stop.click()
    wait_status(page, sid, "idle")
    expect(stop).to_have_count(0)
    expect(page.locator(".msg-assistant .message-interrupted")).to_have_text("Interrupted")
    # What streamed before the stop stays on screen (the step keeps it as durable text).
    expect(page.locator(".msg-assistant .markdown")).to_have_text("Thinking about")
    assert agent_service.request("GET", f"/api/session/{sid}")["status"] == "idle"
    gate.open()  # the fake's held response may end now; nothing resumes the turn
    assert fake_provider.invalid_count == 0


def test_escape_in_the_empty_prompt_box_interrupts_the_running_turn(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    sid, gate = held_answer(page, agent_service, fake_provider, "Held ")
    wait_status(page, sid, "busy")
    prompt_box(page).press("Escape")
    expect(page.locator(".msg-assistant .message-interrupted")).to_have_text("Interrupted")
    wait_status(page, sid, "idle")
    gate.open()
    assert fake_provider.invalid_count == 0


def test_a_prompt_sent_while_the_agent_runs_is_queued_and_says_so(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    gate = fake_provider.gate()
    reply = text_reply("First ", "answer.")
    reply.gate, reply.gate_after = gate.event, 2
    fake_provider.script(reply, text_reply("Second answer."))
    sid = create_session(agent_service)
    open_chat(page, agent_service, sid)
    send(page, "first")
    expect(page.locator(".msg-assistant .markdown")).to_have_text("First")
    expect(page.locator(".composer-hint")).to_contain_text("queued")

    send(page, "second")
    queued = page.locator(".msg-user[data-queued='true']")
    expect(queued).to_have_count(1)
    expect(queued.locator(".message-queued")).to_contain_text("Queued")
    gate.open()
    expect(page.locator(".msg-assistant .markdown")).to_have_text(
        ["First answer.", "Second answer."]
    )
    expect(queued).to_have_count(0)
    expect(page.locator(".message .plain, .message .markdown")).to_have_text(
        ["first", "First answer.", "second", "Second answer."]
    )
    bodies = [r.body for r in fake_provider.requests()]
    assert [m["content"] for m in bodies[1]["messages"] if m["role"] == "user"] == [
        "first",
        "second",
    ]
    assert fake_provider.invalid_count == 0


def test_the_retry_banner_counts_down_then_goes_and_the_answer_shows(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    fake_provider.script(error_reply(429, retry_after="3"), text_reply("Worth the wait."))
    sid = create_session(agent_service)
    open_chat(page, agent_service, sid)
    page.evaluate(
        """() => {
        window.__retryTexts = []
        new MutationObserver(() => {
            const text = document.querySelector('.chat-retry')?.textContent
            const seen = window.__retryTexts
            if (text && seen[seen.length - 1] !== text) seen.push(text)
        }).observe(document.body, { subtree: true, childList: true, characterData: true })
    }"""
    )
    send(page, "try hard")
    banner = page.locator(".chat-retry")
    # In plain words, with the status and the provider's host.
    expect(banner).to_contain_text("(attempt 1): The provider at 127.0.0.1:")
    expect(banner).to_contain_text("is limiting requests (HTTP 429).")
    expect(page.locator(".msg-assistant .markdown")).to_have_text("Worth the wait.", timeout=15000)
    expect(banner).to_have_count(0)
    texts: list[str] = page.evaluate("() => window.__retryTexts")
    counts = [int(t.split("Retrying in ")[1].split(" s")[0]) for t in texts if "Retrying in" in t]
    assert len(counts) >= 2, texts
    assert counts == sorted(counts, reverse=True), texts
    assert len(set(counts)) == len(counts), texts  # each second shown once, counting down
    assert fake_provider.invalid_count == 0


def test_token_usage_of_a_turn_shows_under_its_last_assistant_message(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    # Two steps (the tool call and the answer), 11 in / 7 out each (the fake's usage chunk).
    fake_provider.script(
        tool_call_reply(Call("call_1", "shell", {"command": "true"})), text_reply("All good.")
    )
    sid = create_session(agent_service)
    open_chat(page, agent_service, sid)
    send(page, "check")
    expect(page.locator(".msg-assistant .markdown")).to_have_text("All good.")
    usage = page.locator(".turn-usage")
    expect(usage).to_have_count(1)
    # Worded as what the turn's two requests sent, not as a context size.
    expect(usage).to_have_text("2 steps · 22 tokens sent · 14 out")
    last = page.locator(".msg-assistant").last
    expect(last.locator(".turn-usage")).to_have_count(1)
    wait_until(lambda: session_status(page, sid) == "idle", what="turn ended")
    assert fake_provider.invalid_count == 0


def test_reasoning_streams_live_in_its_collapsed_part_and_the_durable_part_replaces_it(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    gate = fake_provider.gate()
    reply = text_reply("The answer.", reasoning=["Weighing ", "the options"])
    reply.gate, reply.gate_after = gate.event, 3  # both reasoning pieces out, no text yet
    fake_provider.script(reply)
    sid = create_session(agent_service)
    open_chat(page, agent_service, sid)
    send(page, "think first")
    live = page.locator(".msg-assistant .part-reasoning.part-live")
    expect(live).to_have_count(1)
    expect(live.locator("summary")).to_have_text("Reasoning…")
    expect(live).not_to_have_attribute("open", "")
    expect(live.locator(".plain")).to_have_text("Weighing the options")

    gate.open()
    expect(page.locator(".msg-assistant .markdown")).to_have_text("The answer.")
    expect(live).to_have_count(0)
    reasoning = page.locator(".msg-assistant .part-reasoning")
    expect(reasoning).to_have_count(1)
    expect(reasoning.locator(".plain")).to_have_text("Weighing the options")
    assert fake_provider.invalid_count == 0


BOX_HEIGHT = "() => document.querySelector('.composer-input').getBoundingClientRect().height"


def test_the_prompt_box_fits_its_lines_again_when_the_window_is_resized(
    page: Page, service: Service
) -> None:
    page.set_viewport_size({"width": 1280, "height": 800})
    sid = create_session(service)
    open_chat(page, service, sid)
    box = prompt_box(page)
    box.fill("x")
    one_line = page.evaluate(BOX_HEIGHT)
    page.set_viewport_size({"width": 480, "height": 800})
    box.fill("Please read the parser and say what it does")  # one line wide, two narrow
    page.wait_for_function(f"() => ({BOX_HEIGHT})() > {one_line} + 8")
    page.set_viewport_size({"width": 1280, "height": 800})
    page.wait_for_function(f"() => ({BOX_HEIGHT})() === {one_line}")
    page.set_viewport_size({"width": 480, "height": 800})
    page.wait_for_function(f"() => ({BOX_HEIGHT})() > {one_line} + 8")
    assert box.evaluate("(el) => el.scrollHeight <= el.clientHeight + 2")  # all of it in view
