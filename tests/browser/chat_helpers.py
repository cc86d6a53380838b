"""Helpers for the chat browser tests: sessions and events through the real API.

Messages come from durable events published through the service's test hook
(`POST /api/test/events`, present only with DESK_TEST_HOOKS=1), the same bus and projection
the agent will use.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page

from tests.browser.helpers import Service, sign_in

MODEL = {"id": "test-model", "provider_id": "test"}
HOOK_BATCH = 1000  # the hook's limit per request


@pytest.fixture(autouse=True)
def _test_hooks(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The `service` fixture's `desk serve` inherits this environment."""
    monkeypatch.setenv("DESK_TEST_HOOKS", "1")
    yield


def create_session(service: Service, title: str = "Chat", directory: str = "/tmp") -> str:
    return str(
        service.request("POST", "/api/session", {"title": title, "directory": directory})["id"]
    )


def publish(service: Service, session_id: str, events: list[tuple[str, dict[str, Any]]]) -> None:
    items = [{"session_id": session_id, "type": kind, "data": data} for kind, data in events]
    for start in range(0, len(items), HOOK_BATCH):
        service.request("POST", "/api/test/events", {"events": items[start : start + HOOK_BATCH]})


def user(message_id: str, text: str) -> list[tuple[str, dict[str, Any]]]:
    return [("session.prompted", {"message_id": message_id, "text": text, "mode": "queue"})]


def assistant(
    message_id: str, text: str, *, completed: bool = True
) -> list[tuple[str, dict[str, Any]]]:
    events: list[tuple[str, dict[str, Any]]] = [
        ("session.step.started", {"message_id": message_id, "agent": "build", "model": MODEL}),
        ("session.text", {"message_id": message_id, "text": text}),
    ]
    if completed:
        events.append(("session.step.ended", {"message_id": message_id, "finish": "stop"}))
    return events


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
