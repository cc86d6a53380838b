"""Debian's Chromium under Playwright (never a downloaded browser) and signing a page in."""

from __future__ import annotations

from playwright.sync_api import Page, ViewportSize

from tests.support.service import Service

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# The page size every test's first window has.
VIEWPORT: ViewportSize = {"width": 1200, "height": 720}


def sign_in(page: Page, svc: Service) -> None:
    """Opens the token link and waits until the page's connection is up."""
    page.goto(f"{svc.url}/?token={svc.token}")
    page.wait_for_function(
        "() => window.__desk && window.__desk.state().connection === 'connected'"
    )
