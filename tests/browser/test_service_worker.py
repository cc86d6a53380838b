"""The built service worker (web/dist/sw.js) against a fixture server that plays an old and a
new build of the site: a legacy Workbox-style worker is upgraded without reloading the page,
old chunks still load, and HTML is never cached under an asset URL."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from aiohttp import web
from playwright.sync_api import Page, expect

from tests.support.wait import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.persistent_profile]

# What an older Desk shipped: a precaching worker that served every navigation from its cache.
LEGACY_WORKER = """
self.addEventListener("install", event => event.waitUntil(
  caches.open("workbox-precache-v2-" + self.registration.scope).then(cache =>
    cache.addAll(["/index.html", "/assets/app-old.js", "/assets/lazy-old.js"])
  )
))
self.addEventListener("fetch", event => {
  if (event.request.mode === "navigate") {
    event.respondWith(caches.match("/index.html"))
    return
  }
  event.respondWith(caches.match(event.request).then(response => response || fetch(event.request)))
})
"""


@dataclass
class Site:
    worker: str
    version: str = "old"
    repaired: bool = False
    url: str = ""

    def upgrade(self) -> None:
        self.version = "new"

    def repair(self) -> None:
        self.repaired = True

    async def handle(self, request: web.Request) -> web.Response:
        path = request.path
        prefix = "/assets" if self.version == "old" else "/_assets"
        headers = {"cache-control": "no-store"}
        js = "text/javascript"
        if path == "/sw.js":
            body = LEGACY_WORKER if self.version == "old" else self.worker
            return web.Response(body=body.encode(), content_type=js, headers=headers)
        if path == f"{prefix}/app-{self.version}.js":
            body = f'import "{prefix}/startup-{self.version}.js"'
            return web.Response(body=body.encode(), content_type=js, headers=headers)
        if path == f"{prefix}/startup-{self.version}.js":
            body = (
                "document.getElementById('root').innerHTML = "
                f"'<h1>{self.version}</h1><label>Draft<input></label>"
                "<button>Load older chunk</button><output></output>'\n"
                "document.querySelector('button').onclick = () => import('/assets/lazy-old.js')"
            )
            return web.Response(body=body.encode(), content_type=js, headers=headers)
        if (path == "/assets/lazy-old.js" and self.version == "old") or (
            path == "/_assets/retry.js" and self.repaired
        ):
            body = 'document.querySelector("output").textContent = "Older chunk loaded"'
            return web.Response(body=body.encode(), content_type=js, headers=headers)
        # Deliberately the old server's fallback: the worker must reject HTML asset responses.
        body = (
            '<div id="root"></div>'
            f'<script type="module" src="{prefix}/app-{self.version}.js"></script>'
        )
        return web.Response(body=body.encode(), content_type="text/html", headers=headers)


@pytest.fixture
def site(built_ui: Path) -> Iterator[Site]:
    state = Site(worker=(built_ui / "sw.js").read_text())
    ready = threading.Event()
    loop = asyncio.new_event_loop()

    stopping = asyncio.Event()

    async def run() -> None:
        app = web.Application()
        app.router.add_route("GET", "/{tail:.*}", state.handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        state.url = f"http://127.0.0.1:{port}"
        ready.set()
        await stopping.wait()
        await runner.cleanup()

    thread = threading.Thread(target=lambda: loop.run_until_complete(run()), daemon=True)
    thread.start()
    assert ready.wait(10), "fixture server did not start"
    try:
        yield state
    finally:
        loop.call_soon_threadsafe(stopping.set)
        thread.join(10)
        loop.close()


def register_worker(page: Page) -> None:
    page.evaluate(
        """async () => {
            await navigator.serviceWorker.register("/sw.js")
            await navigator.serviceWorker.ready
        }"""
    )


def test_updates_a_legacy_worker_without_reloading_drafts_or_deleting_old_chunks(
    page: Page, site: Site
) -> None:
    page.goto(site.url)
    expect(page.get_by_role("heading")).to_have_text("old")
    register_worker(page)
    page.goto(site.url)
    expect(page.get_by_role("heading")).to_have_text("old")
    page.get_by_label("Draft").fill("Keep this unsent prompt")

    site.upgrade()
    page.evaluate(
        """async () => {
            const cache = await caches.open("desk-assets")
            await cache.put(
                "/_assets/startup-new.js",
                new Response("<html>stale fallback</html>", {
                    headers: { "content-type": "text/html" },
                }),
            )
            const changed = new Promise((resolve) =>
                navigator.serviceWorker.addEventListener(
                    "controllerchange", () => resolve(), { once: true },
                ),
            )
            const registration = await navigator.serviceWorker.getRegistration()
            if (!registration) throw new Error("Missing legacy worker")
            await registration.update()
            await changed
        }"""
    )

    # The new worker took over without reloading the page: the draft is still there...
    expect(page.get_by_label("Draft")).to_have_value("Keep this unsent prompt")
    # ...and the old page can still load a chunk only the legacy precache holds.
    page.get_by_role("button", name="Load older chunk").click()
    expect(page.get_by_role("status")).to_have_text("Older chunk loaded")

    # Navigations come from the network (no cached HTML navigation fallback any more).
    page.goto(f"{site.url}/workspace/example")
    expect(page.get_by_role("heading")).to_have_text("new")
    # The stale HTML stored under an asset URL was neither served nor kept.
    wait_until(
        lambda: (
            page.evaluate(
                """async () => {
                const cache = await caches.open("desk-assets")
                const hit = await cache.match("/_assets/startup-new.js")
                return hit ? hit.headers.get("content-type") : null
            }"""
            )
            == "text/javascript"
        ),
        what="desk-assets holds the real startup-new.js",
    )


def test_does_not_cache_html_responses_under_asset_urls(page: Page, site: Site) -> None:
    site.upgrade()
    page.goto(site.url)
    expect(page.get_by_role("heading")).to_have_text("new")
    register_worker(page)
    page.goto(site.url)
    expect(page.get_by_role("heading")).to_have_text("new")
    assert page.evaluate("() => !!navigator.serviceWorker.controller")
    content_type = "async () => (await fetch('/_assets/retry.js')).headers.get('content-type')"
    cached = """async () => {
        const hit = await (await caches.open("desk-assets")).match("/_assets/retry.js")
        return hit ? hit.headers.get("content-type") : null
    }"""
    # The server's HTML fallback passes through, and is never stored (asked twice, so a
    # store from the first answer would have landed by the second)...
    assert page.evaluate(content_type).startswith("text/html")
    assert page.evaluate(content_type).startswith("text/html")
    assert page.evaluate(cached) is None
    site.repair()
    # ...so the repaired asset comes from the network now, and that one is cached.
    assert page.evaluate(content_type) == "text/javascript"
    wait_until(lambda: page.evaluate(cached) == "text/javascript", what="the asset is cached")
