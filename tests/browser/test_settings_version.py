"""The settings dialog names the running Desk's version (the one `desk --version` prints), so
an upgrade can be seen from the UI."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

import desktop
from tests.support.chromium import sign_in
from tests.support.service import Service

pytestmark = pytest.mark.browser


def test_the_settings_dialog_shows_the_version(page: Page, service: Service) -> None:
    sign_in(page, service)
    page.locator(".sessions-head .settings-button").click()
    dialog = page.locator("dialog.settings-dialog")
    expect(dialog.locator(".settings-version")).to_have_text(f"Desk {desktop.__version__}")
