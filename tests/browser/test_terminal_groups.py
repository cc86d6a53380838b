"""Terminal tabs grouped by the API's `group` (issue 4): sections, new tabs, persisted order."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_terminals import create_shell, group_tab_ids, terminal, terminals
from tests.support.chromium import sign_in
from tests.support.service import Service
from tests.support.wait import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.shared_service]


def open_ui(page: Page, service: Service, tabs: int) -> None:
    sign_in(page, service)
    wait_for_tabs(page, tabs)


def wait_for_tabs(page: Page, count: int) -> None:
    page.wait_for_function(
        "(n) => window.__desk.state().loaded && window.__desk.terminals().length === n", arg=count
    )


def state(page: Page) -> dict[str, Any]:
    return page.evaluate("() => window.__desk.state()")  # type: ignore[no-any-return]


def new_tab_id(page: Page, before: set[str]) -> str:
    """The id of the one tab that appeared since `before`, once it is the active one."""
    found: list[str] = wait_until(
        lambda: [t["id"] for t in terminals(page) if t["id"] not in before and t["active"]],
        what="a new active tab",
    )
    return found[0]


def ids_in_group(service: Service, group: str) -> set[str]:
    return {info["id"] for info in service.request("GET", f"/api/pty?group={group}")}


def saved_order(service: Service) -> list[str]:
    """The saved tab order ([] until the UI saves one)."""
    value = service.request("GET", "/api/ui/prefs/terminal-order")["value"]
    return value if isinstance(value, list) else []


def activate(page: Page, pty_id: str) -> None:
    page.locator(f'.tab[data-id="{pty_id}"]').click()
    wait_until(lambda: terminal(page, pty_id)["active"], what=f"{pty_id} active")


def test_groups_are_shown_together_and_new_tabs_open_in_their_group(
    page: Page, service: Service
) -> None:
    plain = create_shell(service, "plain")
    open_ui(page, service, 1)
    # Nothing grouped yet: one plain strip, no group headers or per-group buttons.
    assert group_tab_ids(page, "Terminal tabs") == [plain]
    expect(page.get_by_role("button", name="Add a terminal to")).to_have_count(0)

    # Created interleaved; shown live, each group's tabs together in their own named tablist.
    a1 = create_shell(service, "api-server", "alpha")
    b1 = create_shell(service, "docs", "beta")
    a2 = create_shell(service, "worker", "alpha")
    wait_for_tabs(page, 4)
    alpha = page.get_by_role("tablist", name="alpha", exact=True)
    expect(alpha.get_by_role("tab")).to_have_count(2)
    expect(alpha.get_by_role("tab").nth(0)).to_have_accessible_name(re.compile(r"^api-server\b"))
    expect(alpha.get_by_role("tab").nth(1)).to_have_accessible_name(re.compile(r"^worker\b"))
    beta = page.get_by_role("tablist", name="beta", exact=True)
    expect(beta.get_by_role("tab")).to_have_count(1)
    expect(beta.get_by_role("tab")).to_have_accessible_name(re.compile(r"^docs\b"))
    assert group_tab_ids(page, "No session") == [plain]
    expect(page.get_by_role("tablist", name="Terminal tabs", exact=True)).to_have_count(0)
    assert state(page)["order"] == [plain, a1, a2, b1]
    assert [(g["group"], g["terminals"]) for g in state(page)["groups"]] == [
        (None, [plain]),
        ("alpha", [a1, a2]),
        ("beta", [b1]),
    ]
    assert {t["id"]: t["group"] for t in terminals(page)} == {
        plain: None,
        a1: "alpha",
        a2: "alpha",
        b1: "beta",
    }

    # The group's own "+" opens a terminal in that group.
    before = {t["id"] for t in terminals(page)}
    page.get_by_role("button", name="Add a terminal to beta").click()
    b2 = new_tab_id(page, before)
    wait_until(lambda: ids_in_group(service, "beta") == {b1, b2}, what="new terminal in beta")
    assert group_tab_ids(page, "beta") == [b1, b2]
    assert terminal(page, b2)["group"] == "beta"

    # Ctrl+Shift+T opens one in the active tab's group.
    activate(page, a1)
    page.locator(f"#pane-{a1} .xterm").click()
    before = {t["id"] for t in terminals(page)}
    page.keyboard.press("Control+Shift+T")
    a3 = new_tab_id(page, before)
    wait_until(lambda: ids_in_group(service, "alpha") == {a1, a2, a3}, what="new in alpha")
    assert group_tab_ids(page, "alpha") == [a1, a2, a3]

    # The bar's "+" (named for it) opens a terminal of no group, even with alpha's tab active.
    assert terminal(page, a3)["active"]
    main_plus = page.get_by_role("button", name="New terminal, in no session", exact=True)
    expect(main_plus).to_have_attribute("title", re.compile(r"^New terminal, in no session"))
    before = {t["id"] for t in terminals(page)}
    main_plus.click()
    plain2 = new_tab_id(page, before)
    assert service.request("GET", f"/api/pty/{plain2}")["group"] is None
    assert group_tab_ids(page, "No session") == [plain, plain2]
    assert ids_in_group(service, "alpha") == {a1, a2, a3}
    assert ids_in_group(service, "beta") == {b1, b2}

    # Ctrl+Shift+G goes to the next group, to the tab last active there.
    page.keyboard.press("Control+Shift+G")
    wait_until(lambda: terminal(page, a3)["active"], what="alpha's last active tab")
    page.keyboard.press("Control+Shift+G")
    wait_until(lambda: terminal(page, b2)["active"], what="beta's last active tab")
    page.keyboard.press("Control+Shift+G")
    wait_until(lambda: terminal(page, plain2)["active"], what="back to the default group")


def test_order_within_groups_persists_across_reload(page: Page, service: Service) -> None:
    a1 = create_shell(service, "a-one", "alpha")
    a2 = create_shell(service, "a-two", "alpha")
    b1 = create_shell(service, "b-one", "beta")
    b2 = create_shell(service, "b-two", "beta")
    open_ui(page, service, 4)
    assert state(page)["order"] == [a1, a2, b1, b2]

    # A tab dropped on another group's tab stays where it was (its group is fixed)...
    page.locator(f'.tab[data-id="{b2}"]').drag_to(
        page.locator(f'.tab[data-id="{a1}"]'), target_position={"x": 4, "y": 10}
    )
    # ...while within its group it moves, and the order is saved.
    page.locator(f'.tab[data-id="{a2}"]').drag_to(
        page.locator(f'.tab[data-id="{a1}"]'), target_position={"x": 4, "y": 10}
    )
    wait_until(lambda: saved_order(service) == [a2, a1, b1, b2], what="drag saved")
    assert group_tab_ids(page, "alpha") == [a2, a1]
    assert group_tab_ids(page, "beta") == [b1, b2]

    # Keyboard: Ctrl+Shift+PageUp moves the tab left; at its group's start it stays.
    activate(page, b2)
    page.keyboard.press("Control+Shift+PageUp")
    wait_until(lambda: group_tab_ids(page, "beta") == [b2, b1], what="moved left")
    page.keyboard.press("Control+Shift+PageUp")
    wait_until(lambda: saved_order(service) == [a2, a1, b2, b1], what="keyboard move saved")
    assert group_tab_ids(page, "alpha") == [a2, a1]

    page.reload()
    page.wait_for_function("() => window.__desk && window.__desk.state().loaded")
    wait_for_tabs(page, 4)
    assert group_tab_ids(page, "alpha") == [a2, a1]
    assert group_tab_ids(page, "beta") == [b2, b1]
    assert state(page)["order"] == [a2, a1, b2, b1]


@pytest.mark.fresh_service
def test_state_says_whether_the_service_connection_is_up(page: Page, service: Service) -> None:
    open_ui(page, service, 0)
    assert state(page)["connected"] is True
    service.kill()
    page.wait_for_function("() => window.__desk.state().connected === false")
    assert state(page)["connection"] != "connected"
    service.start()
    page.wait_for_function("() => window.__desk.state().connected === true", timeout=20000)
