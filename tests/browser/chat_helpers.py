"""Helpers for the chat browser tests: sessions and events through the real API.

Messages come from durable events published through the service's test hook
(`POST /api/test/events`, present only with DESK_TEST_HOOKS=1), the same bus and projection
the agent will use.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from tests.support.chat import (  # re-exported: the chat tests import them from here
    HOOK_BATCH as HOOK_BATCH,
)
from tests.support.chat import (
    MODEL as MODEL,
)
from tests.support.chat import (
    assistant as assistant,
)
from tests.support.chat import (
    create_session as create_session,
)
from tests.support.chat import (
    publish as publish,
)
from tests.support.chat import (
    user as user,
)
from tests.support.chromium import sign_in
from tests.support.service import Service


@pytest.fixture(autouse=True)
def _test_hooks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The `service` fixture's `desk serve` inherits this environment."""
    monkeypatch.setenv("DESK_TEST_HOOKS", "1")


def open_chat(page: Page, service: Service, session_id: str) -> None:
    """Signs in, opens the session from the sidebar and waits for its first page."""
    sign_in(page, service)
    page.locator(f".session-item[data-id='{session_id}'] .session-open").click()
    page.wait_for_function(
        "(id) => { const c = window.__desk.chat(); return c.active === id && c.state === 'ready' }",
        arg=session_id,
    )
    wait_rendered(page)


def wait_rendered(page: Page) -> None:
    """Until every loaded message is in the DOM (a page renders over a few frames)."""
    page.wait_for_function(
        "() => document.querySelectorAll('.chat-messages .message').length"
        " === window.__desk.chat().messages.length"
    )


def chat_state(page: Page) -> dict[str, Any]:
    return page.evaluate("() => window.__desk.chat()")  # type: ignore[no-any-return]


def message_ids(page: Page) -> list[str]:
    return page.evaluate(  # type: ignore[no-any-return]
        "() => [...document.querySelectorAll('.chat-messages .message')].map((m) => m.dataset.id)"
    )
