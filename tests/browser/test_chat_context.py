"""Context pressure in Chromium: the header's meter follows the session's `context`, a
compaction leaves a collapsed "Earlier messages summarised" divider that opens on the summary,
"Compact now" compacts, and the page still shows every message the person wrote."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_chat import chat_state, open_chat
from tests.support.chat import create_session
from tests.support.compaction import SUMMARY, WINDOW, prose, summaries
from tests.support.fake_provider import Call, text_reply, tool_call_reply
from tests.support.fake_provider_thread import ThreadedFakeProvider, threaded_fake_provider
from tests.support.service import Service

pytestmark = pytest.mark.browser

PROMPTS = 6


@pytest.fixture
def fake_provider() -> Iterator[ThreadedFakeProvider]:
    """The strict fake with a window its model list states, answering summary requests."""
    models = [{"id": "fake-model", "context_length": WINDOW}]
    with threaded_fake_provider(window=WINDOW, models=models, route=summaries) as fake:
        yield fake


COUNT = "window.__desk.chat().messages.filter((m) => m.description === 'compaction').length"


def compactions(page: Page) -> int:
    return int(page.evaluate(f"() => {COUNT}"))


def short(n: int) -> str:
    return f"{round(n / 1000)}k" if n >= 1000 else str(n)


def expected_meter(service: Service, sid: str) -> str:
    context = service.request("GET", f"/api/session/{sid}")["context"]
    return f"{round(context['used'] / context['window'] * 100)} % of {short(context['window'])}"


def test_the_meter_follows_the_context_and_a_compaction_shows_as_a_divider(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider, tmp_path: Path
) -> None:
    sid = create_session(agent_service, directory=str(tmp_path))
    open_chat(page, agent_service, sid)
    meter = page.locator(".chat-header .context-meter-text")
    expect(meter).to_have_text("unknown window")
    composer = page.locator(".composer-input")
    texts = [f"Read notes{i}.txt and tell me what it says." for i in range(PROMPTS)]
    for i, text in enumerate(texts):
        (tmp_path / f"notes{i}.txt").write_text(prose(1500, i))
        fake_provider.script(
            tool_call_reply(Call(f"call_{i}", "read", {"path": f"notes{i}.txt"})),
            text_reply(f"answer {i}"),
        )
        composer.fill(text)
        composer.press("Enter")
        expect(page.locator(".msg-assistant .markdown").last).to_have_text(f"answer {i}")
        expect(page.locator(".chat-header .session-status")).not_to_have_attribute(
            "data-status", "busy"
        )
        # The meter's figure is the session's context.used / context.window, step by step.
        expect(meter).to_have_text(expected_meter(agent_service, sid))
    title = meter.get_attribute("title") or ""
    used = agent_service.request("GET", f"/api/session/{sid}")["context"]["used"]
    assert f"{used:,} of {WINDOW:,} tokens" in title

    divider = page.locator(".msg-compaction").first
    divider.scroll_into_view_if_needed()
    expect(divider.locator("summary")).to_contain_text("Earlier messages summarised")
    expect(divider.locator(".compaction-summary")).to_be_hidden()
    divider.locator("summary").click()
    expect(divider.locator(".compaction-summary")).to_have_text(SUMMARY)

    # Compact now: one more compaction, the person asked for it.
    before = compactions(page)
    page.locator(".chat-header .context-compact").click()
    page.wait_for_function(f"() => {COUNT} === {before + 1}")
    expect(page.locator(".chat-header .context-compact")).to_have_text("Compact now")
    expect(page.locator(".chat-header .context-error")).to_have_count(0)

    # Every message the person wrote is still on the page's list.
    state = chat_state(page)
    shown = [m["text"] for m in state["messages"] if m["type"] == "user"]
    assert shown == texts
    assert fake_provider.invalid_count == 0
