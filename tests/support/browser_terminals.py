"""Views of the terminals in the page for the browser tests, and plain shells created through
the API (the service: tests/support/service.py)."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.support.service import ROOT, Service
from tests.support.wait import wait_until

ARTIFACTS = ROOT / "tests" / "artifacts"


# ---- helpers on the page ------------------------------------------------------------------


def terminals(page: Page) -> list[dict[str, Any]]:
    return page.evaluate("() => window.__desk.terminals()")  # type: ignore[no-any-return]


def terminal(page: Page, pty_id: str) -> dict[str, Any]:
    for info in terminals(page):
        if info["id"] == pty_id:
            return info
    raise AssertionError(f"no tab for terminal {pty_id}")


def buffer_text(page: Page, pty_id: str) -> str:
    return page.evaluate("(id) => window.__desk.bufferText(id)", pty_id)  # type: ignore[no-any-return]


def buffer_lines(page: Page, pty_id: str) -> list[str]:
    return [line.rstrip() for line in buffer_text(page, pty_id).split("\n")]


def wait_for_line(page: Page, pty_id: str, line: str, timeout: float = 10.0) -> None:
    try:
        page.wait_for_function(
            "([id, line]) => (window.__desk.bufferText(id) || '').split('\\n')"
            ".some((l) => l.trimEnd() === line)",
            arg=[pty_id, line],
            timeout=timeout * 1000,
        )
    except PlaywrightTimeoutError:
        # Say what the page showed instead: the tab's state, its notice and its last rows.
        shown = [row for row in buffer_lines(page, pty_id) if row][-12:]
        notice = page.evaluate("() => document.getElementById('terminal-notice')?.textContent")
        info = terminal(page, pty_id)
        state = {key: info.get(key) for key in ("phase", "role", "status")}
        raise AssertionError(
            f"{line!r} not shown within {timeout}s; tab {state}, notice {notice!r}, last rows:\n"
            + "\n".join(shown)
        ) from None


def wait_for_status(page: Page, pty_id: str, status: str, timeout: float = 10.0) -> None:
    page.wait_for_function(
        "([id, status]) => window.__desk.terminals()"
        ".some((t) => t.id === id && t.status === status)",
        arg=[pty_id, status],
        timeout=timeout * 1000,
    )


def wait_attached(page: Page, pty_id: str, role: str = "controller", timeout: float = 10.0) -> None:
    page.wait_for_function(
        "([id, role]) => window.__desk.terminals()"
        ".some((t) => t.id === id && t.phase === 'live' && t.role === role)",
        arg=[pty_id, role],
        timeout=timeout * 1000,
    )


def activate(page: Page, pty_id: str) -> None:
    """Clicks the tab of `pty_id` and waits until it is the active one."""
    page.locator(f'.tab[data-id="{pty_id}"]').click()
    wait_until(lambda: terminal(page, pty_id)["active"], what=f"{pty_id} active")


def type_line(page: Page, text: str) -> None:
    page.keyboard.type(text)
    page.keyboard.press("Enter")


# ---- terminal groups ----------------------------------------------------------------------

PLAIN_BASH: dict[str, Any] = {
    "command": "bash",
    "args": ["--norc", "--noprofile"],
    "env": {"PS1": "$ ", "TERM": "xterm-256color"},
}


def create_shell(service: Service, title: str, group: str | None = None) -> str:
    """A plain bash (`$ ` prompt) created through the API, in `group` when given, once it has
    printed its prompt."""
    body: dict[str, Any] = {**PLAIN_BASH, "title": title}
    if group is not None:
        body["group"] = group
    pty_id = str(service.request("POST", "/api/pty", body)["id"])
    wait_until(
        lambda: service.request("GET", f"/api/pty/{pty_id}")["output"]["tail"] >= 2,
        what=f"{title} prompt",
    )
    return pty_id


def group_tab_ids(page: Page, name: str) -> list[str]:
    """Terminal ids of the tabs in the tablist whose accessible name is `name`, in order."""
    tabs = page.get_by_role("tablist", name=name, exact=True).get_by_role("tab")
    return tabs.evaluate_all("(els) => els.map((el) => el.dataset.id)")  # type: ignore[no-any-return]
