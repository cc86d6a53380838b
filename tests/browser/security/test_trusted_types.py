"""The page's one HTML policy name ("dompurify") belongs to DOMPurify from the first moment:
no other script can register it, even before any model output was rendered."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page

from tests.support.browser_chat import open_chat
from tests.support.chat import create_session
from tests.support.service import Service


def test_the_dompurify_policy_exists_before_any_markdown_is_rendered(
    page: Page, service: Service
) -> None:
    open_chat(page, service, create_session(service))  # an empty session: nothing rendered
    taken = page.evaluate(
        """() => {
            try {
                trustedTypes.createPolicy('dompurify', { createHTML: (s) => s })
                return 'registered'
            } catch (e) { return e.name }
        }"""
    )
    assert taken == "TypeError"


def test_pywebviews_injected_scripts_run_under_the_pages_trusted_types(page: Page) -> None:
    """What pywebview injects into Desk's window (its API, then customize.js with Desk's
    window options) runs without a Trusted Types error in a page that enforces them."""
    import webview
    from webview import util

    from desktop.app.window import TEXT_SELECT

    window = webview.Window("t", "Desk", None, text_select=TEXT_SELECT)
    window.js_api_endpoint = None  # set when a GUI starts the window
    loaded: Any = util.load_js_files(window, "qtwebengine")  # (code, finish script)
    code = loaded[0]
    page.set_content(
        "<html><head><meta http-equiv='Content-Security-Policy' "
        "content=\"require-trusted-types-for 'script'; trusted-types dompurify\"></head>"
        "<body></body></html>"
    )
    outcome = page.evaluate(
        "(code) => { try { (0, eval)(code); return 'ran' } catch (e) { return e.message } }",
        code,
    )
    assert outcome == "ran"
