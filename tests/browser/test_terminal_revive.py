"""Revived terminals as the page shows them (issue 12, items 1 and 11): after the app quits
and starts again, or after the PTY host crashed, the page's xterm.js buffer holds the old
rows, then the marker, then a working prompt below them."""

from __future__ import annotations

import base64
import json
import re

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_tabs import (
    focus_terminal,
    kill_pty_host,
    open_ui,
    quit_everything,
    reload_and_attach,
    shot,
)
from tests.support.browser_terminals import (
    buffer_lines,
    buffer_text,
    create_shell,
    type_line,
    wait_attached,
    wait_for_line,
    wait_for_status,
)
from tests.support.service import Service
from tests.support.wait import wait_until

pytestmark = pytest.mark.browser

ROWS = "cd /var && seq 1 100 | sed 's/^/row-/'"


def restored_marker_index(lines: list[str], word: str = "restored") -> int:
    marks = [i for i, line in enumerate(lines) if re.fullmatch(rf"--- {word} .*---", line)]
    assert len(marks) == 1, lines
    return marks[0]


def assert_pwd_below_restored_rows(lines: list[str], marker: str = "restored") -> None:
    last_row = max(i for i, line in enumerate(lines) if line == "row-100")
    mark = restored_marker_index(lines, marker)
    answers = [i for i, line in enumerate(lines) if line == "/var"]
    assert answers, lines
    assert last_row < mark < answers[-1], lines
    # The old rows are intact and in order: nothing was written over them.
    rows = [line for line in lines if line.startswith("row-")]
    numbers = [int(line[4:]) for line in rows]
    assert numbers == list(range(numbers[0], 101)), rows
    assert not any(re.search(r"/var\d", line) for line in lines), lines


def test_revived_tab_shows_old_rows_then_marker_then_pwd_on_its_own_line(
    page: Page, service: Service
) -> None:
    pty_id = create_shell(service, "revived")
    open_ui(page, service, 1)
    wait_attached(page, pty_id)
    focus_terminal(page, pty_id)
    type_line(page, ROWS)
    wait_for_line(page, pty_id, "row-100")
    wait_until(lambda: buffer_lines(page, pty_id)[-1] == "$", what="prompt after the rows")

    quit_everything(service)
    service.start()
    reload_and_attach(page, pty_id)
    wait_until(lambda: "--- restored" in buffer_text(page, pty_id), what="restored marker")
    focus_terminal(page, pty_id)
    type_line(page, "pwd")
    # Wait for whatever pwd printed (the bug printed "/var" over an old row: "/var58").
    wait_until(
        lambda: any(line.startswith("/var") for line in buffer_lines(page, pty_id)),
        what="pwd answered",
    )
    shot(page, "1-revived-after-quit")
    assert_pwd_below_restored_rows(buffer_lines(page, pty_id))

    # A second reload replays the same bytes: the same screen, still in order.
    before = buffer_text(page, pty_id)
    reload_and_attach(page, pty_id)
    wait_until(lambda: buffer_text(page, pty_id) == before, what="same screen after reload")
    # And the service's own screen model agrees with the page.
    snapshot = service.request("GET", f"/api/pty/{pty_id}/snapshot")
    visible = [line.rstrip() for line in snapshot["lines"]]
    page_lines = buffer_lines(page, pty_id)
    tail = [line for line in visible if line]
    assert page_lines[-len(tail) :] == tail, (page_lines, visible)


@pytest.fixture(autouse=True)
def quick_autosave(monkeypatch: pytest.MonkeyPatch) -> None:
    # Inherited by the service and the PTY host it starts (before the `service` fixture).
    monkeypatch.setenv("DESK_PTY_AUTOSAVE_SECONDS", "0.5")


def autosaved(service: Service, pty_id: str) -> dict[str, object] | None:
    path = service.data_dir / "terminals" / "autosave" / f"{pty_id}.json"
    try:
        value = json.loads(path.read_text())
    except (FileNotFoundError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def test_after_a_pty_host_crash_the_tab_comes_back_marked_recovered(
    page: Page, service: Service
) -> None:
    pty_id = create_shell(service, "crashy")
    open_ui(page, service, 1)
    wait_attached(page, pty_id)
    focus_terminal(page, pty_id)
    type_line(page, "cd /var && echo before-$((6*7))")
    wait_for_line(page, pty_id, "before-42")

    def saved_with_output() -> bool:
        saved = autosaved(service, pty_id)
        return bool(
            saved
            and saved["cwd"] == "/var"
            and b"before-42" in base64.b64decode(str(saved["checkpoint"]))
        )

    wait_until(saved_with_output, what="autosaved with the folder and the output")
    kill_pty_host(service)

    # The page reconnects; the service starts a new PTY host, which revives the tab.
    wait_until(
        lambda: "--- recovered after a crash" in buffer_text(page, pty_id),
        timeout=20,
        what="recovered marker",
    )
    wait_for_status(page, pty_id, "recovered")
    expect(page.get_by_role("img", name="Recovered after a crash")).to_be_visible()
    shot(page, "11-recovered-after-crash")
    focus_terminal(page, pty_id)
    type_line(page, "pwd")
    wait_until(
        lambda: any(line.startswith("/var") for line in buffer_lines(page, pty_id)),
        what="pwd answered",
    )
    lines = buffer_lines(page, pty_id)
    mark = restored_marker_index(lines, "recovered after a crash")
    answer = max(i for i, line in enumerate(lines) if line == "/var")
    assert lines.index("before-42") < mark < answer
    # Typing in it acknowledges the recovery: an ordinary running tab again.
    wait_for_status(page, pty_id, "running")
    assert service.request("GET", f"/api/pty/{pty_id}")["revived"] == "recovered"
