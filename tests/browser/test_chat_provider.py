"""The provider settings in Chromium: the no-provider notice, the settings dialog (a bad base
URL's 400 inline, the key write-only) and a prompt answered once the dialog configured the
strict fake provider."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_chat import open_chat
from tests.support.chat import create_session
from tests.support.fake_provider import text_reply
from tests.support.fake_provider_thread import ThreadedFakeProvider
from tests.support.service import Service

pytestmark = pytest.mark.browser

KEY = "sk-test-0123456789abcdef"


def test_without_a_provider_a_prompt_says_so_and_the_dialog_configures_one_that_answers(
    page: Page, service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    sid = create_session(service)
    open_chat(page, service, sid)
    notice = page.locator(".provider-notice")
    expect(notice).to_contain_text("No model provider is configured")

    page.locator(".composer-input").fill("hello?")
    page.locator(".composer-input").press("Enter")
    failed = page.locator(".msg-assistant .message-error")
    expect(failed).to_have_attribute("data-type", "provider.not_configured")
    failed.locator(".provider-configure").click()

    dialog = page.locator("dialog.settings-dialog")
    expect(dialog).to_be_visible()
    dialog.locator("#provider-kind").select_option("openai-compatible")
    dialog.locator("#provider-base-url").fill("ftp://127.0.0.1/v1")
    dialog.locator("#provider-model").fill("fake-model")
    dialog.locator("#provider-key").fill(KEY)
    dialog.get_by_role("button", name="Save").click()
    # The route's 400, inline in the dialog, which stays open; nothing was saved.
    expect(dialog.locator(".form-error")).to_have_text(
        "base_url must be an http:// or https:// URL with a host."
    )
    expect(dialog).to_be_visible()
    assert service.request("GET", "/api/config/provider")["configured"] is False

    dialog.locator("#provider-base-url").fill(fake_provider.base_url)
    dialog.get_by_role("button", name="Save").click()
    expect(dialog).to_be_hidden()
    expect(notice).to_have_count(0)  # provider.config.updated / the saved settings
    saved = service.request("GET", "/api/config/provider")
    assert saved["configured"] is True
    assert saved["api_key_set"] is True

    # Reopened: the key field is empty and says a key is stored; the key is nowhere on the page.
    page.locator(".chat-header .settings-button").click()
    expect(dialog).to_be_visible()
    expect(dialog.locator("#provider-base-url")).to_have_value(fake_provider.base_url)
    expect(dialog.locator("#provider-key")).to_have_value("")
    expect(dialog.locator("#provider-key-state")).to_contain_text("A key is stored")
    assert KEY not in page.content()
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()

    fake_provider.script(text_reply("Configured and answering."))
    page.locator(".composer-input").fill("and now?")
    page.locator(".composer-input").press("Enter")
    expect(page.locator(".msg-assistant .markdown")).to_have_text("Configured and answering.")
    requests = fake_provider.requests()
    assert len(requests) == 1
    assert requests[0].headers.get("Authorization") == f"Bearer {KEY}"
    assert fake_provider.invalid_count == 0


def test_the_stored_key_can_be_removed_without_ever_being_shown(
    page: Page, service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    service.request(
        "PUT",
        "/api/config/provider",
        {
            "provider": "openai-compatible",
            "base_url": fake_provider.base_url,
            "model": "fake-model",
            "api_key": KEY,
        },
    )
    sid = create_session(service)
    open_chat(page, service, sid)
    expect(page.locator(".provider-notice")).to_have_count(0)
    page.locator(".sessions-head .settings-button").click()
    dialog = page.locator("dialog.settings-dialog")
    expect(dialog.locator("#provider-key-state")).to_contain_text("A key is stored")
    expect(dialog.locator("#provider-key")).to_have_value("")
    dialog.locator(".provider-key-remove").click()
    expect(dialog.locator("#provider-key-state")).to_contain_text("will be removed")
    dialog.get_by_role("button", name="Save").click()
    expect(dialog).to_be_hidden()
    assert service.request("GET", "/api/config/provider")["api_key_set"] is False

    page.locator(".sessions-head .settings-button").click()
    expect(dialog.locator("#provider-key-state")).to_contain_text("No key is stored")
    expect(dialog.locator(".provider-key-remove")).to_have_count(0)
    assert KEY not in page.content()
    assert fake_provider.invalid_count == 0


def test_a_provider_configured_elsewhere_clears_the_notice_live(
    page: Page, service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    sid = create_session(service)
    open_chat(page, service, sid)
    notice = page.locator(".provider-notice")
    expect(notice).to_be_visible()
    # Another window (here: the API) saves settings: the provider.config.updated event.
    service.request(
        "PUT",
        "/api/config/provider",
        {"provider": "openai-compatible", "base_url": fake_provider.base_url, "model": "m"},
    )
    expect(notice).to_have_count(0)
    assert fake_provider.invalid_count == 0
