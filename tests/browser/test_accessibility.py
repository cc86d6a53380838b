"""axe-core in Chromium, in both themes: no serious or critical violation on the chat (a session
with a finished answer holding text, code and tool cards), the new-session dialog, the provider
settings dialog, the session's model settings, the keyboard help and the terminal strip with
tabs (tests/support/axe.py: the page keeps its real policy, Trusted Types included)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.support.axe import described, violations
from tests.support.browser_chat import open_chat
from tests.support.browser_terminals import create_shell
from tests.support.chat import MODEL, create_session, publish
from tests.support.service import Service

pytestmark = pytest.mark.browser


def tool(mid: str, cid: str, name: str, args: dict[str, Any], content: str) -> list[Any]:
    return [
        ("session.tool.input.started", {"message_id": mid, "call_id": cid, "name": name}),
        ("session.tool.called", {"message_id": mid, "call_id": cid, "name": name, "input": args}),
        ("session.tool.success", {"message_id": mid, "call_id": cid, "content": content}),
    ]


def finished_answer() -> list[tuple[str, dict[str, Any]]]:
    """A prompt and an answer of two steps: shell, read and edit cards, then text with code."""
    text = "Done. The parser now reads both forms:\n\n```python\ndef parse(s):\n    return s\n```\n"
    return [
        ("session.prompted", {"message_id": "u1", "text": "fix the parser", "mode": "queue"}),
        ("session.step.started", {"message_id": "a1", "agent": "build", "model": MODEL}),
        *tool("a1", "c_sh", "shell", {"command": "make test"}, "2 passed\n[exit code 0]"),
        *tool("a1", "c_rd", "read", {"path": "parser.py"}, "1\tdef parse(s):\n"),
        *tool("a1", "c_ed", "edit", {"path": "parser.py", "old": "a\nb", "new": "a\nc"}, "ok"),
        ("session.step.ended", {"message_id": "a1", "finish": "tool_calls"}),
        ("session.step.started", {"message_id": "a2", "agent": "build", "model": MODEL}),
        ("session.text", {"message_id": "a2", "text": text}),
        (
            "session.step.ended",
            {"message_id": "a2", "finish": "stop", "tokens": {"input": 120, "output": 40}},
        ),
    ]


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_chat_the_dialogs_and_the_terminal_strip_have_no_serious_violations(
    page: Page, service: Service, theme: str
) -> None:
    page.emulate_media(color_scheme=theme)  # type: ignore[arg-type]
    sid = create_session(service, "Parser fix")
    publish(service, sid, finished_answer())
    create_shell(service, "shell one")
    create_shell(service, "shell two")
    create_shell(service, "build", group=sid)
    open_chat(page, service, sid)
    expect(page.locator(".msg-assistant .markdown").last).to_contain_text("Done.")
    expect(page.get_by_role("tab")).to_have_count(3)
    page.locator(".part-tool[data-call='c_ed'] summary").click()
    expect(page.locator(".part-tool[data-call='c_ed'] .unified-diff")).to_be_visible()
    found: dict[str, list[dict[str, Any]]] = {}
    found["chat and terminal strip"] = violations(page)

    page.get_by_role("button", name="New session").click()
    expect(page.get_by_role("dialog", name="New session")).to_be_visible()
    found["new-session dialog"] = violations(page)
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog", name="New session")).to_have_count(0)

    page.locator(".chat-header .settings-button").click()
    settings = page.locator("dialog.settings-dialog")
    expect(settings.locator(".provider-form")).to_be_visible()
    expect(settings.locator(".rules-editor")).to_be_visible()
    found["settings dialog"] = violations(page)
    page.keyboard.press("Escape")
    expect(settings).to_be_hidden()

    page.locator(".chat-header .model-picker-button").click()
    expect(page.locator(".model-picker-form")).to_be_visible()
    found["session settings"] = violations(page)
    page.locator(".model-picker-form").get_by_role("button", name="Cancel").click()

    page.locator(".chat-scroll").focus()
    page.keyboard.press("F1")
    expect(page.locator("dialog.keyboard-help")).to_be_visible()
    found["help overlay"] = violations(page)
    page.keyboard.press("Escape")

    found = {scene: items for scene, items in found.items() if items}
    assert not found, "\n" + described(found)
