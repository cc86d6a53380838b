"""Fixtures for the browser tests: the built UI, one Chromium for the run with a context per
test (an on-disk profile where a test needs one), and real Desk services, one per test or one
per module where the tests share it (tests/support/service.py)."""

from __future__ import annotations

import contextlib
import fcntl
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Error, Page, Playwright, sync_playwright

from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS, VIEWPORT
from tests.support.fake_provider_thread import ThreadedFakeProvider, threaded_fake_provider
from tests.support.service import DIST, WEB, Service, empty, running_service


def _build_is_current() -> bool:
    if not (DIST / "index.html").is_file() or not (DIST / "sw.js").is_file():
        return False
    built = (DIST / "index.html").stat().st_mtime
    sources = [WEB / "index.html", WEB / "vite.config.js", WEB / "package-lock.json"]
    sources += [p for p in (WEB / "src").rglob("*") if p.is_file()]
    return all(p.stat().st_mtime <= built for p in sources if p.exists())


@pytest.fixture(scope="session")
def built_ui() -> Path:
    """The built UI (`make` builds it; built here too when missing or older than its sources,
    by one pytest-xdist worker at a time)."""
    with (Path(tempfile.gettempdir()) / "desk-web-build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _build_is_current():
            if not (WEB / "node_modules").is_dir():
                subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=WEB, check=True)
            subprocess.run(["npm", "run", "build"], cwd=WEB, check=True)
    assert (DIST / "sw.js").is_file(), "web/dist/sw.js missing after the build"
    return DIST


# Package scope: sync Playwright keeps an event loop running in this thread while open,
# which would break the asyncio tests of the suites that run after this one. Every browser
# test lives in this package, so package scope is once per run.
@pytest.fixture(scope="package")
def playwright_instance() -> Iterator[Playwright]:
    with sync_playwright() as playwright:
        yield playwright


@pytest.fixture(scope="package")
def chromium(playwright_instance: Playwright) -> Iterator[list[Browser]]:
    """The run's one Chromium, in a list so that a test after a crash gets a new one."""
    held: list[Browser] = []
    yield held
    for instance in held:
        instance.close()


@pytest.fixture
def browser(chromium: list[Browser], playwright_instance: Playwright) -> Iterator[Browser]:
    """The shared Chromium; each context a test opens in it is a separate window with separate
    storage, and is closed after the test."""
    if not chromium or not chromium[0].is_connected():
        chromium[:] = [
            playwright_instance.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
        ]
    instance = chromium[0]
    before = set(instance.contexts)
    yield instance
    for context in instance.contexts:
        if context not in before:
            _close(context)


def _close(context: BrowserContext) -> None:
    with contextlib.suppress(Error):  # already gone with a crashed browser
        context.close()


@pytest.fixture
def user_data_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="desk-chromium-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def persistent_context(
    playwright_instance: Playwright, user_data_dir: Path
) -> Iterator[BrowserContext]:
    """A Chromium of its own on a fresh on-disk profile (service workers and caches start
    empty); for the tests marked `persistent_profile`."""
    context = playwright_instance.chromium.launch_persistent_context(
        str(user_data_dir),
        executable_path=CHROMIUM,
        headless=True,
        args=CHROMIUM_ARGS,
        viewport=VIEWPORT,
    )
    yield context
    _close(context)


@pytest.fixture
def browser_context(request: pytest.FixtureRequest) -> BrowserContext:
    """The test's first window: a new context in the shared Chromium, or a fresh on-disk
    profile for a test marked `persistent_profile`."""
    if request.node.get_closest_marker("persistent_profile") is not None:
        context: BrowserContext = request.getfixturevalue("persistent_context")
        return context
    shared: Browser = request.getfixturevalue("browser")
    return shared.new_context(viewport=VIEWPORT)  # closed by `browser` after the test


@pytest.fixture
def page(browser_context: BrowserContext) -> Page:
    pages = browser_context.pages
    return pages[0] if pages else browser_context.new_page()


@pytest.fixture(scope="module")
def module_service(built_ui: Path) -> Iterator[Service]:
    """The service a `shared_service` module's tests share (test hooks on, for the chat's)."""
    with running_service(test_hooks=True) as svc:
        yield svc


def _shares_service(request: pytest.FixtureRequest) -> bool:
    node = request.node
    return node.get_closest_marker("shared_service") is not None and (
        node.get_closest_marker("fresh_service") is None
    )


@pytest.fixture
def service(request: pytest.FixtureRequest, built_ui: Path) -> Iterator[Service]:
    """A service with no model provider configured: the module's shared one, emptied, in a
    module marked `shared_service`; otherwise one of the test's own on fresh dirs."""
    if _shares_service(request):
        shared: Service = request.getfixturevalue("module_service")
        empty(shared)
        yield shared
        return
    with running_service() as svc:
        yield svc


@pytest.fixture
def fake_provider() -> Iterator[ThreadedFakeProvider]:
    """The strict fake model provider, on its own thread (it outlives service restarts)."""
    with threaded_fake_provider() as fake:
        yield fake


@pytest.fixture
def agent_service(built_ui: Path, fake_provider: ThreadedFakeProvider) -> Iterator[Service]:
    """A service whose agent talks to `fake_provider`, configured through the real route."""
    with running_service() as svc:
        svc.request(
            "PUT",
            "/api/config/provider",
            {
                "provider": "openai-compatible",
                "base_url": fake_provider.base_url,
                "model": "fake-model",
            },
        )
        yield svc


@pytest.fixture(autouse=True)
def page_test_hooks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Services a browser test starts run with DESK_TEST_HOOKS=1 (inherited): the page loads
    its test hooks (window.__desk), which the tests read, only when the service says so."""
    monkeypatch.setenv("DESK_TEST_HOOKS", "1")
