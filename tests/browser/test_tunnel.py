"""Desk used from another machine's browser through an SSH-style tunnel on another port.

The page's origin names the tunnel's local port, not the service's: the token link must
log in, and the same-origin checks on cookie writes and WebSocket tickets must compare
with the origin the browser used.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_terminals import terminals, type_line, wait_attached, wait_for_line
from tests.support.service import Service
from tests.support.tunnel import forwarded_port

pytestmark = [pytest.mark.browser, pytest.mark.shared_service]


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_token_link_through_a_forwarded_port_logs_in_and_opens_a_terminal(
    page: Page, service: Service, host: str
) -> None:
    with forwarded_port(service.port) as local_port:
        assert local_port != service.port
        origin = f"http://{host}:{local_port}"
        page.goto(f"{origin}/?token={service.token}")
        page.wait_for_function(
            "() => window.__desk && window.__desk.state().connection === 'connected'"
        )
        assert page.url == f"{origin}/", "the token must leave the address bar"
        page.get_by_role("button", name="New terminal").click()
        expect(page.get_by_role("tab")).to_have_count(1)
        pty_id = terminals(page)[0]["id"]
        # The WebSocket needed a ticket, issued only to the origin the browser used.
        wait_attached(page, pty_id)
        type_line(page, "echo through-$((40+2))")
        wait_for_line(page, pty_id, "through-42")
        # A cookie-authenticated write from the tunnel's origin is accepted too.
        status = page.evaluate(
            """async () => (await fetch('/api/ui/prefs/tunnel-check', {
                method: 'PUT', headers: {'Content-Type': 'application/json'},
                body: JSON.stringify({value: 1})})).status"""
        )
        assert status == 200
