"""The terminal strip under agent use, in Chromium at 1280x800 and 880x600 against a real
service, PTY host and the strict fake provider: the agent's commands do not pile into the strip
but sit behind one "Agent jobs (N)" chip per session, whose menu shows one as a tab, reaches a
running one first and closes the session's finished ones in one action; closing a running job's
tab only hides it. The active tab is scrolled into view among many tabs, the two kinds of "+"
say what they create, and the window title names the session while the person chats and the
tab while they use the terminals."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.support.axe import violations
from tests.support.browser_agent import job_row, shell_call
from tests.support.browser_chat import open_chat
from tests.support.browser_terminals import create_shell, wait_attached
from tests.support.chat import create_session
from tests.support.fake_provider import text_reply, tool_call_reply
from tests.support.fake_provider_thread import ThreadedFakeProvider
from tests.support.service import Service
from tests.support.wait import wait_until

pytestmark = pytest.mark.browser

SIZES = [pytest.param((1280, 800), id="1280x800"), pytest.param((880, 600), id="880x600")]


def state(page: Page) -> dict[str, Any]:
    return page.evaluate("() => window.__desk.state()")  # type: ignore[no-any-return]


def tab_in_strip(page: Page, pty_id: str) -> dict[str, float]:
    """The tab's and the strip's left and right edges, and the strip's scroll."""
    return page.evaluate(  # type: ignore[no-any-return]
        """(id) => {
            const strip = document.getElementById('tab-strip').getBoundingClientRect()
            const tab = document.querySelector(`.tab[data-id='${id}']`).getBoundingClientRect()
            return { left: tab.left, right: tab.right, stripLeft: strip.left,
                     stripRight: strip.right,
                     scroll: document.getElementById('tab-strip').scrollLeft }
        }""",
        pty_id,
    )


def session_with_tabs(
    page: Page, service: Service, title: str, folder: Path
) -> tuple[str, list[str]]:
    """A session in `folder` with 16 terminals, more than the strip shows, open in the page."""
    sid = create_session(service, title, directory=str(folder))
    ids = [
        service.request("POST", "/api/pty", {"group": sid, "title": f"shell-{n}"})["id"]
        for n in range(16)
    ]
    open_chat(page, service, sid)
    page.wait_for_function("(n) => window.__desk.terminals().length === n", arg=len(ids))
    return sid, ids


IN_STRIP_VIEW = """(id) => {
    const strip = document.getElementById('tab-strip').getBoundingClientRect()
    const tab = document.querySelector(`.tab[data-id='${id}']`)?.getBoundingClientRect()
    return !!tab && tab.left >= strip.left - 0.5 && tab.right <= strip.right + 0.5
}"""


def assert_in_strip_view(page: Page, pty_id: str) -> None:
    """The tab comes into the strip's view (the page scrolls it there in the frame after it
    renders the list or the activation)."""
    with contextlib.suppress(PlaywrightTimeoutError):
        page.wait_for_function(IN_STRIP_VIEW, arg=pty_id, timeout=5000)
    box = tab_in_strip(page, pty_id)
    assert box["left"] >= box["stripLeft"] - 0.5, box
    assert box["right"] <= box["stripRight"] + 0.5, box


def hide(job_tab: Locator) -> None:
    """Clicks the running command's tab's close mark, which says it hides the tab."""
    close = job_tab.locator(".tab-close")
    expect(close).to_have_attribute(
        "title", re.compile(r"^Hide this tab: the agent's command runs on")
    )
    close.click()


def job_terminals(service: Service, sid: str) -> list[dict[str, Any]]:
    return [
        t
        for t in service.request("GET", "/api/pty")
        if (t.get("job") or {}).get("session_id") == sid
    ]


@pytest.mark.parametrize("size", SIZES)
def test_agent_commands_sit_behind_one_chip_that_opens_them_and_closes_the_finished(
    page: Page,
    agent_service: Service,
    fake_provider: ThreadedFakeProvider,
    size: tuple[int, int],
) -> None:
    page.set_viewport_size({"width": size[0], "height": size[1]})
    quick = [shell_call(f"echo quick-{n}", f"call_{n}", background=False) for n in range(10)]
    fake_provider.script(
        tool_call_reply(*quick, shell_call("echo long-$((6*7)); sleep 300", "call_long")),
        text_reply("ran them"),
        text_reply("noted"),
    )
    sid = create_session(agent_service, "Payments API")
    mine = create_shell(agent_service, "my-shell", sid)
    open_chat(page, agent_service, sid)
    agent_service.request("POST", f"/api/session/{sid}/prompt", {"text": "go"})

    chip = page.locator(".tab-group", has=page.locator(".tab-group-label", has_text="Payments API"))
    chip = chip.locator(".tab-jobs")
    expect(chip).to_have_text("Agent jobs (11) · 1 running", timeout=20000)
    expect(chip).to_have_attribute("aria-haspopup", "menu")
    # Eleven commands, no tab for any: the strip holds the person's one terminal.
    expect(page.locator(".tab")).to_have_count(1)
    assert [t["id"] for t in page.evaluate("() => window.__desk.terminals()")] == [mine]
    assert len(state(page)["foldedJobs"]) == 11

    # The menu: the running one first, reached with one click on it; then the finished ones.
    chip.click()
    expect(chip).to_have_attribute("aria-expanded", "true")
    menu = page.get_by_role("menu", name="Agent jobs in Payments API")
    items = menu.get_by_role("menuitem")
    expect(items).to_have_count(12)
    expect(items.first).to_have_accessible_name(
        re.compile(r"^echo long-\$\(\(6\*7\)\); sleep 300\s+running$")
    )
    expect(items.first).to_be_focused()
    expect(items.nth(1)).to_have_accessible_name(re.compile(r"^echo quick-\d\s+exit 0$"))
    close_finished = menu.get_by_role("menuitem", name="Close finished (10)")
    expect(close_finished).to_be_visible()
    # The whole menu is on screen, and its "Close finished" is in reach without scrolling it.
    assert close_finished.evaluate(
        """(el) => {
            const r = el.getBoundingClientRect()
            return document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2) === el
        }"""
    )
    assert violations(page, [".tab-jobs", ".tab-jobs-menu"]) == []
    box = menu.bounding_box()
    assert box is not None
    assert box["x"] >= 0
    assert box["y"] >= 0
    assert box["x"] + box["width"] <= size[0]
    assert box["y"] + box["height"] <= size[1]

    running = next(t for t in job_terminals(agent_service, sid) if t["status"] != "exited")
    items.first.click()
    expect(menu).to_be_hidden()
    job_tab = page.locator(f".tab[data-id='{running['id']}']")
    expect(job_tab).to_have_attribute("aria-selected", "true")
    expect(job_tab).to_have_class(re.compile(r"\btab-job\b"))
    wait_attached(page, running["id"], role="observer")
    assert_in_strip_view(page, running["id"])
    expect(chip).to_have_text("Agent jobs (11) · 1 running")

    # One action closes the session's ten finished commands (their terminals go for good).
    chip.click()
    menu.get_by_role("menuitem", name="Close finished (10)").click()
    wait_until(lambda: len(job_terminals(agent_service, sid)) == 1, what="finished jobs closed")
    expect(chip).to_have_text("Agent jobs (1) · 1 running")
    expect(page.locator("#terminal-notice")).to_have_text(
        "Closed 10 finished agent commands in Payments API."
    )
    assert state(page)["foldedJobs"] == []

    # Closing the running command's tab hides it: the command runs on, behind the chip.
    hide(job_tab)
    expect(job_tab).to_have_count(0)
    expect(page.locator("#terminal-notice")).to_have_text(
        "“echo long-$((6*7)); sleep 300” still runs: it is under Agent jobs in Payments API."
    )
    assert state(page)["foldedJobs"] == [running["id"]]
    assert agent_service.request("GET", f"/api/pty/{running['id']}")["status"] == "running"
    expect(chip).to_have_text("Agent jobs (1) · 1 running")
    expect(page.locator("#terminal-notice")).not_to_contain_text("deleted")
    # A running command is one click away in the chat too: its jobs panel row opens the tab.
    job_row(page, "call_long").locator(".job-open-terminal").click()
    page.wait_for_function("(id) => window.__desk.state().activeTerminal === id", arg=running["id"])
    expect(job_tab).to_have_attribute("aria-selected", "true")
    assert_in_strip_view(page, running["id"])
    hide(job_tab)
    expect(job_tab).to_have_count(0)

    # The menu by keyboard: Escape gives the keyboard back to the chip.
    chip.focus()
    page.keyboard.press("Enter")
    expect(menu.get_by_role("menuitem").first).to_be_focused()
    page.keyboard.press("ArrowDown")
    expect(menu.get_by_role("menuitem", name="Close finished (0)")).to_be_focused()
    page.keyboard.press("Escape")
    expect(menu).to_be_hidden()
    expect(chip).to_be_focused()

    jobs = agent_service.request("GET", f"/api/session/{sid}/jobs")
    long_job = next(j for j in jobs if j["status"] == "running")
    agent_service.request("POST", f"/api/session/{sid}/jobs/{long_job['id']}/cancel")
    expect(chip).to_have_text("Agent jobs (1)", timeout=15000)
    assert fake_provider.invalid_count == 0


def plus_buttons(page: Page) -> tuple[Locator, Locator]:
    return (
        page.get_by_role("button", name="New terminal, in no session", exact=True),
        page.get_by_role("button", name="Add a terminal to Payments API, in its folder"),
    )


@pytest.mark.parametrize("size", SIZES)
def test_the_active_tab_is_scrolled_into_view_and_each_plus_says_what_it_opens(
    page: Page, service: Service, tmp_path: Path, size: tuple[int, int]
) -> None:
    page.set_viewport_size({"width": size[0], "height": size[1]})
    folder = tmp_path / "payments"
    folder.mkdir()
    sid, ids = session_with_tabs(page, service, "Payments API", folder)

    plain, in_session = plus_buttons(page)
    expect(plain).to_have_attribute(
        "title", "New terminal, in no session (opens in your home folder)"
    )
    expect(in_session).to_have_attribute(
        "title", f"New terminal in Payments API, opened in the session's folder {folder}"
    )
    strip = page.locator("#tab-strip")
    assert strip.evaluate("(el) => el.scrollWidth > el.clientWidth"), "the strip must overflow"

    # A new terminal from the session's "+" opens at the end of its group, scrolled into view.
    before = {t["id"] for t in service.request("GET", "/api/pty")}
    in_session.click()
    created = wait_until(
        lambda: [t for t in service.request("GET", "/api/pty") if t["id"] not in before],
        what="a new terminal",
    )[0]
    assert created["group"] == sid
    assert created["cwd"] == str(folder)
    page.wait_for_function("(id) => window.__desk.state().activeTerminal === id", arg=created["id"])
    assert_in_strip_view(page, created["id"])
    assert tab_in_strip(page, created["id"])["scroll"] > 0

    # Back to the first: the strip scrolls back to it.
    page.evaluate("(id) => window.__desk.activate(id)", ids[0])
    assert_in_strip_view(page, ids[0])
    # Keyboard: the strip's End key goes to the last tab, in view again.
    page.locator(f".tab[data-id='{ids[0]}']").focus()
    page.keyboard.press("End")
    page.wait_for_function("(id) => window.__desk.state().activeTerminal === id", arg=created["id"])
    assert_in_strip_view(page, created["id"])

    # The bar's "+" opens a terminal of no session, in its own (default) group.
    before = {t["id"] for t in service.request("GET", "/api/pty")}
    plain.click()
    loose = wait_until(
        lambda: [t for t in service.request("GET", "/api/pty") if t["id"] not in before],
        what="a terminal of no session",
    )[0]
    assert loose["group"] is None
    page.wait_for_function("(id) => window.__desk.state().activeTerminal === id", arg=loose["id"])
    assert_in_strip_view(page, loose["id"])

    # After a reload the tab in view is still the one scrolled to, once every tab is back.
    page.reload()
    page.wait_for_function(
        "(n) => window.__desk && window.__desk.state().loaded"
        " && window.__desk.terminals().length === n",
        arg=len(ids) + 2,
    )
    page.wait_for_function("(id) => window.__desk.state().activeTerminal === id", arg=loose["id"])
    assert_in_strip_view(page, loose["id"])
    assert tab_in_strip(page, loose["id"])["scroll"] > 0


@pytest.mark.parametrize("size", SIZES)
def test_the_window_title_names_the_session_while_the_person_chats(
    page: Page, service: Service, size: tuple[int, int]
) -> None:
    page.set_viewport_size({"width": size[0], "height": size[1]})
    sid = create_session(service, "Payments API")
    shell = create_shell(service, "build-shell", sid)
    open_chat(page, service, sid)
    prompt = page.locator(".composer-input")
    prompt.click()
    expect(page).to_have_title("Payments API — Desk")

    # The terminal in front changes its title while the person chats: the title stays.
    service.request("PATCH", f"/api/pty/{shell}", {"title": "tests-running"})
    expect(page.locator(f".tab[data-id='{shell}']")).to_contain_text("tests-running")
    prompt.type("still typing")
    expect(page).to_have_title("Payments API — Desk")

    # In the terminal, the title names the tab; back in the chat, the session again.
    page.locator(f"#pane-{shell} .xterm").click()
    expect(page).to_have_title("tests-running — Desk")
    prompt.click()
    expect(page).to_have_title("Payments API — Desk")
    service.request("PATCH", f"/api/session/{sid}", {"title": "Billing"})
    expect(page).to_have_title("Billing — Desk")
    page.locator(".chat-messages").click()
    expect(page).to_have_title("Billing — Desk")


@pytest.mark.parametrize("size", SIZES)
def test_the_active_tab_stays_in_view_when_its_groups_label_grows(
    page: Page, service: Service, tmp_path: Path, size: tuple[int, int]
) -> None:
    page.set_viewport_size({"width": size[0], "height": size[1]})
    sid, ids = session_with_tabs(page, service, "API", tmp_path)
    page.evaluate("(id) => window.__desk.activate(id)", ids[-1])
    assert_in_strip_view(page, ids[-1])
    # The session's new title widens its label, which pushes every tab of the group along.
    service.request("PATCH", f"/api/session/{sid}", {"title": "Payments API and the ledger"})
    label = page.locator(".tab-group-label").filter(has_text="Payments API")
    expect(label).to_be_visible()
    assert_in_strip_view(page, ids[-1])
