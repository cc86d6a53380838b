"""Fixtures for the browser tests: the built UI, Chromium profiles, a real Desk service."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, sync_playwright

from desktop.process.liveness import is_alive
from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS
from tests.support.fake_provider_thread import ThreadedFakeProvider, threaded_fake_provider
from tests.support.service import DIST, WEB, Service
from tests.support.wait import wait_until


def _build_is_current() -> bool:
    if not (DIST / "index.html").is_file() or not (DIST / "sw.js").is_file():
        return False
    built = (DIST / "index.html").stat().st_mtime
    sources = [WEB / "index.html", WEB / "vite.config.js", WEB / "package-lock.json"]
    sources += [p for p in (WEB / "src").rglob("*") if p.is_file()]
    return all(p.stat().st_mtime <= built for p in sources if p.exists())


@pytest.fixture(scope="session")
def built_ui() -> Path:
    """The built UI (`make` builds it; built here too when missing or older than its sources)."""
    if not _build_is_current():
        if not (WEB / "node_modules").is_dir():
            subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=WEB, check=True)
        subprocess.run(["npm", "run", "build"], cwd=WEB, check=True)
    assert (DIST / "sw.js").is_file(), "web/dist/sw.js missing after the build"
    return DIST


# Package scope: sync Playwright keeps an event loop running in this thread while open,
# which would break the asyncio tests of the suites that run after this one.
@pytest.fixture(scope="package")
def playwright_instance() -> Iterator[Playwright]:
    with sync_playwright() as playwright:
        yield playwright


@pytest.fixture
def user_data_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="desk-chromium-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def persistent_context(
    playwright_instance: Playwright, user_data_dir: Path
) -> Iterator[BrowserContext]:
    """A fresh Chromium profile (service workers and caches start empty)."""
    context = playwright_instance.chromium.launch_persistent_context(
        str(user_data_dir),
        executable_path=CHROMIUM,
        headless=True,
        args=CHROMIUM_ARGS,
        viewport={"width": 1200, "height": 720},
    )
    yield context
    context.close()


@pytest.fixture
def page(persistent_context: BrowserContext) -> Page:
    pages = persistent_context.pages
    return pages[0] if pages else persistent_context.new_page()


@pytest.fixture
def browser(playwright_instance: Playwright) -> Iterator[Browser]:
    """A browser whose contexts are separate windows with separate storage."""
    instance = playwright_instance.chromium.launch(
        executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
    )
    yield instance
    instance.close()


@contextlib.contextmanager
def running_service() -> Iterator[Service]:
    """A real `desk serve` on fresh dirs; afterwards it and its PTY host are ended."""
    base = Path(tempfile.mkdtemp(prefix="desk-b-", dir="/tmp"))
    svc = Service(data_dir=base / "data", runtime_dir=base / "run")
    svc.runtime_dir.mkdir(mode=0o700)
    svc.start()
    try:
        yield svc
    finally:
        host_pid = svc.pty_host_pid()
        svc.stop()
        # The PTY host outlives the service by design: end it (and so its shells) here.
        if host_pid is not None and is_alive(host_pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(host_pid, signal.SIGTERM)
            try:
                wait_until(lambda: not is_alive(host_pid), timeout=5, what="pty host exit")
            except AssertionError:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(host_pid, signal.SIGKILL)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def service(built_ui: Path) -> Iterator[Service]:
    """A service with no model provider configured."""
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
