"""The page's one HTML policy name ("dompurify") belongs to DOMPurify from the first moment:
no other script can register it, even before any model output was rendered."""

from __future__ import annotations

from playwright.sync_api import Page

from tests.browser.chat_helpers import create_session, open_chat
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
