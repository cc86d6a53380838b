"""Hostile model output in Chromium: it renders as text or sanitised markup and runs nothing.

The page can spawn terminals through the API, so any script that runs here is remote code
execution. Each payload below would run, navigate or fetch if it reached the DOM as markup.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_chat import open_chat
from tests.support.chat import assistant, create_session, publish
from tests.support.service import Service

pytestmark = [pytest.mark.browser, pytest.mark.shared_service]

BEACON = "desk-beacon"

HOSTILE = "\n\n".join(
    [
        f'<img src="/{BEACON}/img" onerror="window.__pwned = \'img\'; alert(1)">',
        "<script>window.__pwned = 'script'; alert(2)</script>",
        f'<svg onload="window.__pwned = \'svg\'"><image href="/{BEACON}/svg"/></svg>',
        f'<iframe src="/{BEACON}/iframe"></iframe>',
        "<a href=\"javascript:window.__pwned='raw-link'\">raw link</a>",
        "[md link](javascript:window.__pwned='md-link')",
        "[spaced](  javascript:window.__pwned='spaced')",
        "[entity](jav&#x61;script:window.__pwned='entity')",
        "[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
        f"![beacon](/{BEACON}/markdown-image)",
        '<form action="/api/pty" method="post"><button>go</button></form>',
        '<div style="position:fixed;inset:0">overlay</div>',
        "[fine](https://example.com/ok)",
        "```html\n<img src=x onerror=\"window.__pwned='fence'\">\n```",
    ]
)


def watch(page: Page) -> dict[str, list[Any]]:
    seen: dict[str, list[Any]] = {"dialogs": [], "requests": [], "violations": []}

    def on_dialog(dialog: Any) -> None:
        seen["dialogs"].append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("request", lambda r: seen["requests"].append(r.url) if BEACON in r.url else None)
    return seen


def test_hostile_html_in_an_answer_renders_as_text_and_runs_nothing(
    page: Page, service: Service
) -> None:
    sid = create_session(service)
    publish(service, sid, assistant("evil", HOSTILE))
    seen = watch(page)
    open_chat(page, service, sid)
    page.evaluate(
        "() => { window.__violations = []; document.addEventListener('securitypolicyviolation',"
        " (e) => window.__violations.push(e.violatedDirective)) }"
    )
    answer = page.locator(".msg-assistant .markdown")
    expect(answer).to_contain_text("fine")

    # Raw HTML arrived as text, not as elements.
    expect(answer).to_contain_text("<img src=")
    expect(answer).to_contain_text("<script>window.__pwned")
    for tag in (
        "img",
        "script",
        "svg",
        "iframe",
        "form",
        "button:not(.code-copy)",
        "div[style]",
        "[onerror]",
        "[onload]",
        "[style]",
    ):
        assert answer.locator(tag).count() == 0, tag

    # Only the http(s) link kept an href, and it opens outside the app without an opener.
    links = answer.locator("a[href]")
    assert links.evaluate_all(
        "(els) => els.map((a) => [a.getAttribute('href'), a.target, a.rel])"
    ) == [["https://example.com/ok", "_blank", "noopener noreferrer"]]
    # Clicking every link-looking thing runs nothing either.
    for link in answer.locator("a").all():
        if link.get_attribute("href") is None:
            link.click()

    assert page.evaluate("() => window.__pwned") is None
    assert seen["dialogs"] == []
    assert seen["requests"] == []
    assert page.evaluate("() => window.__violations") == []


def test_a_hostile_answer_streamed_in_by_deltas_runs_nothing(page: Page, service: Service) -> None:
    sid = create_session(service)
    seen = watch(page)
    open_chat(page, service, sid)
    publish(
        service,
        sid,
        [
            (
                "session.step.started",
                {"message_id": "live", "agent": "build", "model": {"id": "m", "provider_id": "p"}},
            )
        ],
    )
    for start in range(0, len(HOSTILE), 40):
        publish(
            service,
            sid,
            [("session.text.delta", {"message_id": "live", "delta": HOSTILE[start : start + 40]})],
        )
    streaming = page.locator(".msg-assistant .markdown")
    expect(streaming).to_contain_text("fine")
    assert streaming.locator("img, script, svg, iframe, form, [onerror], [style]").count() == 0
    assert page.evaluate("() => window.__pwned") is None
    assert seen["dialogs"] == []
    assert seen["requests"] == []


def test_user_text_and_tool_output_are_plain_text(page: Page, service: Service) -> None:
    sid = create_session(service)
    payload = "<img src=x onerror=\"window.__pwned='user'\"><b>bold?</b>"
    publish(
        service,
        sid,
        [
            ("session.prompted", {"message_id": "u1", "text": payload, "mode": "queue"}),
            (
                "session.step.started",
                {"message_id": "a1", "agent": "build", "model": {"id": "m", "provider_id": "p"}},
            ),
            (
                "session.tool.called",
                {
                    "message_id": "a1",
                    "call_id": "c1",
                    "name": "shell",
                    "input": {"command": payload},
                },
            ),
            ("session.tool.success", {"message_id": "a1", "call_id": "c1", "content": payload}),
            ("session.step.ended", {"message_id": "a1", "finish": "stop"}),
        ],
    )
    open_chat(page, service, sid)
    expect(page.locator(".msg-user")).to_have_text(payload)
    page.locator(".part-tool summary").click()
    expect(page.locator(".tool-body")).to_contain_text(payload)
    assert page.locator(".chat-messages img, .chat-messages b").count() == 0
    assert page.evaluate("() => window.__pwned") is None


def test_the_page_enforces_trusted_types_for_html_and_script_sinks(
    page: Page, service: Service
) -> None:
    open_chat(page, service, create_session(service))
    result = page.evaluate(
        """() => {
            const out = {}
            try { document.createElement('div').innerHTML = '<b>x</b>'; out.html = 'allowed' }
            catch (e) { out.html = e.name }
            try {
                trustedTypes.createPolicy('evil', { createHTML: (s) => s })
                out.policy = 'allowed'
            }
            catch (e) { out.policy = e.name }
            return out
        }"""
    )
    # (eval is not probed here: DevTools evaluation is exempt from the page's CSP; the header's
    # script-src is asserted in tests/server/test_webui.py.)
    assert result == {"html": "TypeError", "policy": "TypeError"}, result
