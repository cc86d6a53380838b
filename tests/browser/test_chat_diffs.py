"""One diff component everywhere a change is shown, in Chromium: a finished edit card shows the
removed and added lines (not escaped JSON), a write card the written lines numbered from 1, a
long write collapsed with a button for the rest; the per-turn view and the permission card use
the same component (their own tests cover what they show)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_chat import open_chat
from tests.support.chat import MODEL, create_session, publish
from tests.support.service import Service

pytestmark = pytest.mark.browser


def call(mid: str, cid: str, name: str, args: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("session.tool.input.started", {"message_id": mid, "call_id": cid, "name": name}),
        ("session.tool.called", {"message_id": mid, "call_id": cid, "name": name, "input": args}),
        ("session.tool.success", {"message_id": mid, "call_id": cid, "content": "ok"}),
    ]


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_edit_and_write_cards_show_their_change_as_a_coloured_numbered_diff(
    page: Page, service: Service, theme: str
) -> None:
    page.emulate_media(color_scheme=theme)  # type: ignore[arg-type]
    sid = create_session(service, "Diffs")
    long_file = "".join(f"line {n}\n" for n in range(1, 451))
    events: list[tuple[str, dict[str, Any]]] = [
        ("session.prompted", {"message_id": "u1", "text": "change things", "mode": "queue"}),
        ("session.step.started", {"message_id": "a1", "agent": "build", "model": MODEL}),
        *call("a1", "c_edit", "edit", {"path": "f.txt", "old": "one\ntwo", "new": "uno\ndos"}),
        *call("a1", "c_write", "write", {"path": "g.txt", "content": "alpha\nbeta\n"}),
        *call("a1", "c_long", "write", {"path": "h.txt", "content": long_file}),
        ("session.step.ended", {"message_id": "a1", "finish": "stop"}),
    ]
    publish(service, sid, events)
    open_chat(page, service, sid)

    edit = page.locator(".part-tool[data-call='c_edit']")
    edit.locator("summary").click()
    diff = edit.locator(".unified-diff")
    expect(diff.locator(".diff-del .diff-text")).to_have_text(["-one", "-two"])
    expect(diff.locator(".diff-add .diff-text")).to_have_text(["+uno", "+dos"])
    expect(edit.locator(".tool-body")).not_to_contain_text('"old"')
    colours = diff.locator(".diff-add").first.evaluate("(e) => getComputedStyle(e).color")
    assert colours != diff.locator(".diff-del").first.evaluate("(e) => getComputedStyle(e).color")

    write = page.locator(".part-tool[data-call='c_write']")
    write.locator("summary").click()
    added = write.locator(".unified-diff .diff-add")
    expect(added.locator(".diff-text")).to_have_text(["+alpha", "+beta"])
    expect(added.first.locator(".diff-no").nth(1)).to_have_text("1")
    expect(added.nth(1).locator(".diff-no").nth(1)).to_have_text("2")

    long = page.locator(".part-tool[data-call='c_long']")
    long.locator("summary").click()
    expect(long.locator(".diff-line")).to_have_count(200)
    more = long.get_by_role("button", name="Show all 451 lines (251 more)")
    more.click()
    expect(long.locator(".diff-line")).to_have_count(451)
