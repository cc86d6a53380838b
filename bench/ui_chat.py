"""Chat view first paint in Chromium: a 10,000-message session against an empty one.

Starts `desk serve` (with DESK_TEST_HOOKS=1, to publish the history through the real bus and
projection), opens the UI in headless Chromium (Debian's) and measures, in the page, the time
from clicking a session in the sidebar to the first animation frame after its latest page is
rendered. The baseline, in the same run and the same page, is an empty session: the ratio is
what 10,000 messages of history add. Medians of --runs alternating runs.

Usage: .venv/bin/python bench/ui_chat.py [--messages 10000] [--runs 7]
Prints figures; never asserts on time.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.chat import (  # noqa: E402
    LOAD_EVERY_PAGE_SCRIPT,
    SCROLL_THROUGH_SCRIPT,
    create_session,
    history,
    publish,
)
from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS, sign_in  # noqa: E402
from tests.support.service import Service  # noqa: E402

PAINT = """async (id) => {
    const frame = () => new Promise((resolve) => requestAnimationFrame(resolve))
    window.__desk.selectSession(null)
    await frame()
    await frame()
    const item = document.querySelector(`.session-item[data-id='${id}'] .session-open`)
    const started = performance.now()
    item.click()
    for (;;) {
        await frame()
        const chat = window.__desk.chat()
        // virtualised: the few messages on screen
        const shown = document.querySelectorAll('.chat-messages .message').length
        const empty = document.querySelector('.chat-empty')
        if (chat.active === id && chat.state === 'ready' && (shown > 0 || empty)) break
    }
    return performance.now() - started
}"""


def first_paint(page: Page, session_id: str) -> float:
    return float(page.evaluate(PAINT, session_id))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()

    os.environ["DESK_TEST_HOOKS"] = "1"
    base = Path(tempfile.mkdtemp(prefix="desk-chatbench-", dir="/tmp"))
    service = Service(data_dir=base / "data", runtime_dir=base / "run")
    service.runtime_dir.mkdir(mode=0o700)
    service.start()
    try:
        empty = create_session(service, "Empty")
        full = create_session(service, "Long history")
        started = time.perf_counter()
        publish(service, full, history(args.messages))
        published = time.perf_counter() - started
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
            page = browser.new_page(viewport={"width": 1200, "height": 720})
            sign_in(page, service)
            page.wait_for_selector(f".session-item[data-id='{full}']")
            baseline: list[float] = []
            loaded: list[float] = []
            for _ in range(args.runs):
                # A fresh page each run: the store caches a session once it is read.
                page.reload()
                page.wait_for_function("() => window.__desk && window.__desk.state().connected")
                page.wait_for_selector(f".session-item[data-id='{full}']")
                baseline.append(first_paint(page, empty))
                page.reload()
                page.wait_for_function("() => window.__desk && window.__desk.state().connected")
                page.wait_for_selector(f".session-item[data-id='{full}']")
                loaded.append(first_paint(page, full))
            # Scrolling the long history: the page's long tasks (over 50 ms) on the way.
            page.reload()
            page.wait_for_function("() => window.__desk && window.__desk.state().connected")
            page.wait_for_selector(f".session-item[data-id='{full}']")
            first_paint(page, full)
            page.evaluate(LOAD_EVERY_PAGE_SCRIPT)
            tasks, seen = page.evaluate(SCROLL_THROUGH_SCRIPT, [200, True])
            browser.close()
    finally:
        service.stop()
        shutil.rmtree(base, ignore_errors=True)

    b, f = statistics.median(baseline), statistics.median(loaded)
    print(f"history: {args.messages} messages published in {published:.1f} s")
    print(f"{'first paint (click to rendered latest page)':<46} {'median ms':>10}  runs")
    print(f"{'empty session (baseline)':<46} {b:>10.1f}  {[round(x, 1) for x in baseline]}")
    print(f"{f'{args.messages}-message session':<46} {f:>10.1f}  {[round(x, 1) for x in loaded]}")
    print(f"ratio {f / b:.2f}x the empty session")
    over = [t for t in tasks if t > 50]
    print(
        f"scroll through {seen} messages and back: {len(over)} tasks over 50 ms"
        f" (longest {max(tasks, default=0)} ms; target: none)"
    )


if __name__ == "__main__":
    main()
