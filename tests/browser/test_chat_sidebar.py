"""The sessions sidebar in Chromium: create, rename, delete, live status, layout."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support.chat import create_session, publish
from tests.support.chromium import sign_in
from tests.support.service import Service
from tests.support.wait import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.shared_service]


def sidebar_item(page: Page, session_id: str):  # type: ignore[no-untyped-def]
    return page.locator(f".session-item[data-id='{session_id}']")


def test_new_session_from_the_sidebar_runs_in_the_chosen_folder_shown_in_its_header(
    page: Page, service: Service
) -> None:
    folder = Path(tempfile.mkdtemp(prefix="desk-chat-folder-"))
    sign_in(page, service)
    page.get_by_role("button", name="New session").click()
    dialog = page.get_by_role("dialog", name="New session")
    dialog.get_by_label("Working folder").fill(str(folder))
    dialog.get_by_label("Title").fill("Refactor parser")
    dialog.get_by_role("button", name="Create session").click()
    expect(dialog).to_be_hidden()

    sessions = service.request("GET", "/api/session")
    assert [(s["title"], s["directory"]) for s in sessions] == [
        ("Refactor parser", os.path.realpath(folder))
    ]
    expect(page.locator(".session-item .session-title")).to_have_text(["Refactor parser"])
    # The new session is open, its folder in the header.
    expect(page.locator(".chat-title")).to_have_text("Refactor parser")
    expect(page.locator(".chat-folder")).to_have_text(os.path.realpath(folder))
    folder.rmdir()


def test_a_folder_that_does_not_exist_is_refused_in_the_dialog_and_creates_nothing(
    page: Page, service: Service
) -> None:
    sign_in(page, service)
    page.get_by_role("button", name="New session").click()
    dialog = page.get_by_role("dialog", name="New session")
    dialog.get_by_label("Working folder").fill("/no/such/folder/anywhere")
    dialog.get_by_role("button", name="Create session").click()
    expect(dialog.get_by_role("alert")).to_contain_text("folder")
    assert service.request("GET", "/api/session") == []


def test_recent_folders_from_existing_sessions_are_offered(page: Page, service: Service) -> None:
    create_session(service, "one", "/tmp")
    create_session(service, "two", "/usr")  # not "/": that one asks the person first
    sign_in(page, service)
    expect(page.locator(".session-item")).to_have_count(2)
    page.get_by_role("button", name="New session").click()
    recent = page.get_by_role("list", name="Recent folders")
    expect(recent.get_by_role("button")).to_have_text(["/usr", "/tmp"])
    recent.get_by_role("button", name="/tmp", exact=True).click()
    expect(page.get_by_label("Working folder")).to_have_value("/tmp")


def test_rename_changes_the_title_everywhere(page: Page, service: Service) -> None:
    sid = create_session(service, "Old name")
    sign_in(page, service)
    item = sidebar_item(page, sid)
    item.hover()
    item.get_by_role("button", name="Rename Old name").click()
    field = item.get_by_label("Session title")
    field.fill("New name")
    field.press("Enter")
    wait_until(
        lambda: service.request("GET", f"/api/session/{sid}")["title"] == "New name", what="rename"
    )
    expect(item.locator(".session-title")).to_have_text("New name")


def test_delete_asks_first_and_cancel_keeps_the_session(page: Page, service: Service) -> None:
    sid = create_session(service, "Doomed")
    sign_in(page, service)
    item = sidebar_item(page, sid)
    item.hover()
    item.get_by_role("button", name="Delete Doomed").click()
    dialog = page.get_by_role("dialog", name="Delete session")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    assert [s["id"] for s in service.request("GET", "/api/session")] == [sid]

    item.hover()
    item.get_by_role("button", name="Delete Doomed").click()
    page.get_by_role("dialog", name="Delete session").get_by_role(
        "button", name="Delete session"
    ).click()
    expect(item).to_have_count(0)
    assert service.request("GET", "/api/session") == []


def test_sessions_created_and_deleted_elsewhere_appear_and_vanish_live(
    page: Page, service: Service
) -> None:
    sign_in(page, service)
    sid = create_session(service, "From elsewhere")
    expect(sidebar_item(page, sid)).to_have_count(1)
    service.request("DELETE", f"/api/session/{sid}")
    expect(sidebar_item(page, sid)).to_have_count(0)


def test_status_icons_differ_in_shape_and_name_not_only_colour(
    page: Page, service: Service
) -> None:
    sid = create_session(service, "Worker")
    sign_in(page, service)
    icon = sidebar_item(page, sid).locator(".session-status")
    expect(icon).to_have_attribute("aria-label", "Idle")
    shapes = {"idle": icon.locator("svg").inner_html()}

    service.request("POST", f"/api/test/session/{sid}/claim", {"claimed": True})
    expect(icon).to_have_attribute("aria-label", "Busy")
    shapes["busy"] = icon.locator("svg").inner_html()

    service.request("POST", f"/api/test/session/{sid}/claim", {"claimed": False})
    publish(
        service,
        sid,
        [
            (
                "session.step.started",
                {"message_id": "a1", "agent": "build", "model": {"id": "m", "provider_id": "p"}},
            ),
            (
                "session.step.failed",
                {"message_id": "a1", "error": {"type": "provider", "message": "boom"}},
            ),
        ],
    )
    expect(icon).to_have_attribute("aria-label", "Error")
    shapes["error"] = icon.locator("svg").inner_html()
    assert len(set(shapes.values())) == 3, shapes


def test_sidebar_collapses_and_resizes_within_half_the_window(page: Page, service: Service) -> None:
    page.set_viewport_size({"width": 500, "height": 600})
    sign_in(page, service)
    sidebar = page.locator("#sessions-sidebar")
    toggle = page.locator("#sidebar-toggle")
    # A 500 px window starts with the sidebar folded away.
    expect(sidebar).to_be_hidden()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    toggle.click()
    expect(sidebar).to_be_visible()
    handle = page.get_by_role("separator", name="Resize sessions sidebar")
    box = handle.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 50)
    page.mouse.down()
    page.mouse.move(480, box["y"] + 50, steps=5)
    page.mouse.up()
    width = sidebar.bounding_box()["width"]  # type: ignore[index]
    assert width <= 250, width  # never more than half of the window

    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 50)
    page.set_viewport_size({"width": 1200, "height": 600})
    handle.focus()
    before = sidebar.bounding_box()["width"]  # type: ignore[index]
    page.keyboard.press("ArrowRight")
    wait_until(lambda: sidebar.bounding_box()["width"] > before, what="keyboard resize")  # type: ignore[index]

    toggle.click()
    expect(sidebar).to_be_hidden()
    page.reload()
    page.wait_for_function("() => window.__desk && window.__desk.state().connected")
    expect(sidebar).to_be_hidden()  # remembered
