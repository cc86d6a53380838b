"""A failed turn in Chromium says what happened in plain words, with the status and the
provider's host, and offers the way out: Open settings for a key, model or address problem,
Retry without retyping (sent with the settings as they are now); a send refused while the
service was unreachable stops saying so once it is back."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_chat import open_chat
from tests.support.chat import create_session
from tests.support.fake_provider import error_reply, text_reply
from tests.support.fake_provider_thread import ThreadedFakeProvider
from tests.support.service import Service

pytestmark = pytest.mark.browser


def send(page: Page, text: str) -> None:
    box = page.locator(".composer-input")
    box.fill(text)
    box.press("Enter")


def configure(service: Service, base_url: str, model: str = "fake-model") -> None:
    body = {"provider": "openai-compatible", "base_url": base_url, "model": model}
    service.request("PUT", "/api/config/provider", body)


def test_a_refused_key_is_said_plainly_with_status_and_host_and_retry_uses_the_new_settings(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    fake_provider.script(
        error_reply(401, "Upstream error.", error_type="authentication_error"),
        text_reply("Answered after the retry."),
    )
    sid = create_session(agent_service)
    open_chat(page, agent_service, sid)
    send(page, "are you there?")
    failed = page.locator(".msg-assistant .message-error")
    host = urlsplit(fake_provider.base_url).netloc
    expect(failed.locator(".message-error-text")).to_have_text(
        f"The provider at {host} refused Desk's API key (HTTP 401). Check the key in the settings."
    )
    expect(failed.locator(".message-error-detail")).to_contain_text("HTTP 401: Upstream error.")
    expect(failed.get_by_role("button", name="Open settings")).to_be_visible()

    # The person fixes the settings elsewhere; Retry sends the same prompt with the new ones.
    configure(agent_service, fake_provider.base_url, model="fake-model-2")
    failed.get_by_role("button", name="Retry").click()
    expect(page.locator(".msg-assistant .markdown")).to_have_text("Answered after the retry.")
    requests = fake_provider.requests()
    assert len(requests) == 2
    assert requests[-1].body["model"] == "fake-model-2"
    assert requests[-1].body["messages"][-1] == {"role": "user", "content": "are you there?"}
    # The answered turn is the latest: the failed one offers no Retry any more.
    expect(page.get_by_role("button", name="Retry")).to_have_count(0)
    assert fake_provider.invalid_count == 0


def test_an_unreachable_provider_names_its_host_and_opens_the_settings(
    page: Page, agent_service: Service
) -> None:
    # A port bound for the whole test but never listened on: connecting is refused, and no
    # other process (a busy machine starts services on free ports) can take it meanwhile.
    with socket.socket() as unreachable:
        unreachable.bind(("127.0.0.1", 0))
        port = unreachable.getsockname()[1]
        configure(agent_service, f"http://127.0.0.1:{port}/v1")
        sid = create_session(agent_service)
        open_chat(page, agent_service, sid)
        send(page, "hello?")
        # Retried with back-off first: the banner already says it plainly, with the way out.
        banner = page.locator(".chat-retry")
        plain = (
            f"Desk could not reach the provider at 127.0.0.1:{port}. Check the base URL in the "
            "settings and that the provider is running."
        )
        expect(banner).to_contain_text(plain)
        expect(banner).not_to_contain_text("ClientConnectorError")
        banner.get_by_role("button", name="Open settings").click()
        expect(page.locator("dialog.settings-dialog")).to_be_visible()


def test_not_sent_goes_away_when_the_service_is_back(page: Page, service: Service) -> None:
    sid = create_session(service)
    open_chat(page, service, sid)
    service.stop()
    page.wait_for_function("() => window.__desk.state().connection !== 'connected'")
    send(page, "into the void")
    expect(page.locator(".composer-error")).to_contain_text("Not sent")
    service.start()
    # The page finds the service back on its own schedule (a probe every 3 s while offline,
    # then the stream): the error goes once it is connected, not within 5 s of the start.
    page.wait_for_function("() => window.__desk.state().connection === 'connected'")
    expect(page.locator(".composer-error")).to_have_count(0)
    expect(page.locator(".composer-input")).to_have_value("into the void")
