"""The browser suite's fixtures (a built UI, Chromium, a service) for the security tests."""

from tests.browser.conftest import *  # noqa: F403
