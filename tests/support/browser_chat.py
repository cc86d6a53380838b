"""Page helpers for the chat browser tests: opening a session in the page and reading the chat
state the page's test hooks expose (sessions and their events: tests/support/chat.py)."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page

from tests.support.chromium import sign_in
from tests.support.service import Service


def open_chat(page: Page, service: Service, session_id: str) -> None:
    """Signs in, opens the session from the sidebar and waits for its first page."""
    sign_in(page, service)
    page.locator(f".session-item[data-id='{session_id}'] .session-open").click()
    page.wait_for_function(
        "(id) => { const c = window.__desk.chat(); return c.active === id && c.state === 'ready' }",
        arg=session_id,
    )
    wait_rendered(page)


# The rendered messages (the list is virtualised: only those near the viewport are in the DOM)
# must be a run of the list's order, in order.
RENDERED_IN_ORDER = """() => {
    const chat = window.__desk.chat()
    const listed = chat.listed
    const shown = [...document.querySelectorAll('.chat-messages .message')].map((m) => m.dataset.id)
    if (listed.length !== chat.messages.length) return false
    if (listed.some((id, i) => id !== chat.messages[i].id)) return false
    if (listed.length > 0 && shown.length === 0) return false
    const start = listed.indexOf(shown[0])
    return shown.every((id, i) => listed[start + i] === id)
}"""


def wait_rendered(page: Page) -> None:
    """Until the list holds every loaded message and the rendered ones are a run of it."""
    page.wait_for_function(RENDERED_IN_ORDER)


def chat_state(page: Page) -> dict[str, Any]:
    return page.evaluate("() => window.__desk.chat()")  # type: ignore[no-any-return]


def message_ids(page: Page) -> list[str]:
    """The list's message ids in order, once the rendered messages agree with it."""
    wait_rendered(page)
    return page.evaluate("() => window.__desk.chat().listed")  # type: ignore[no-any-return]
