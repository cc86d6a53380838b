"""The session's settings in Chromium, against a real service and the strict fake: a model
picked in the header is what the next request carries (the provider's list offered, free text
still working without one); a rule added in the settings decides the next matching call; the
composer queues with Enter and steers with Ctrl+Enter while a turn runs; the header lists the
instruction files in effect."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_chat import open_chat
from tests.support.chat import create_session
from tests.support.fake_provider import Call, text_reply, tool_call_reply
from tests.support.fake_provider_thread import ThreadedFakeProvider, threaded_fake_provider
from tests.support.service import Service
from tests.support.wait import wait_until

pytestmark = pytest.mark.browser

MODELS = [
    {"id": "fake-model", "context_length": 8000},
    {"id": "bigger-model", "context_window": 32000},
    {"id": "local-model", "max_model_len": 4096},
]


@pytest.fixture
def fake_provider(request: pytest.FixtureRequest) -> Iterator[ThreadedFakeProvider]:
    """The strict fake; with a model list unless the test is parametrized with None."""
    models = getattr(request, "param", MODELS)
    with threaded_fake_provider(models=models) as fake:
        yield fake


# Records whether the settings dialog is still open in the first task after its `cancel`.
CLOSED_WITH_ITS_CANCEL = """() => {
    const dialog = document.querySelector('.settings-dialog')
    window.__settingsOpenAfterCancel = null
    dialog.addEventListener('cancel', () => {
        setTimeout(() => (window.__settingsOpenAfterCancel = dialog.open))
    }, { once: true })
}"""


def bodies(fake: ThreadedFakeProvider) -> list[dict[str, Any]]:
    return [r.body for r in fake.requests()]


def pick_model(page: Page, model: str, effort: str) -> None:
    page.locator(".chat-header .model-picker-button").click()
    form = page.locator(".model-picker-form")
    form.locator("#session-model").fill(model)
    form.locator("#session-effort").select_option(effort)
    form.get_by_role("button", name="Apply").click()
    expect(form).to_be_hidden()


def test_a_model_picked_in_the_header_is_what_the_next_request_carries(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider, tmp_path: Path
) -> None:
    fake_provider.script(text_reply("first"), text_reply("second"))
    sid = create_session(agent_service, directory=str(tmp_path))
    open_chat(page, agent_service, sid)
    box = page.locator(".composer-input")
    box.fill("hello")
    box.press("Enter")
    expect(page.locator(".msg-assistant .markdown").last).to_have_text("first", timeout=15000)
    page.locator(".chat-header .model-picker-button").click()
    options = page.locator("#session-model-list option")
    expect(options).to_have_count(3)  # the provider's list, offered
    assert options.evaluate_all("(os) => os.map((o) => o.value)") == [m["id"] for m in MODELS]
    page.locator(".model-picker-form").get_by_role("button", name="Cancel").click()
    pick_model(page, "bigger-model", "high")
    expect(page.locator(".chat-header .model-picker-button")).to_have_text("bigger-model · high")
    box.fill("again")
    box.press("Enter")
    expect(page.locator(".msg-assistant .markdown").last).to_have_text("second", timeout=15000)
    sent = [(b["model"], b.get("reasoning_effort")) for b in bodies(fake_provider)]
    assert sent == [("fake-model", None), ("bigger-model", "high")]
    assert fake_provider.invalid_count == 0


@pytest.mark.parametrize("fake_provider", [None], indirect=True)
def test_without_a_model_list_the_picker_says_so_and_free_text_still_works(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider, tmp_path: Path
) -> None:
    fake_provider.script(text_reply("typed model answered"))
    sid = create_session(agent_service, directory=str(tmp_path))
    open_chat(page, agent_service, sid)
    page.locator(".chat-header .model-picker-button").click()
    expect(page.locator(".model-picker-form .model-list-missing")).to_contain_text(
        "type the model's id"
    )
    page.locator(".model-picker-form").get_by_role("button", name="Cancel").click()
    pick_model(page, "my-own-model", "low")
    box = page.locator(".composer-input")
    box.fill("hello")
    box.press("Enter")
    expect(page.locator(".msg-assistant .markdown").last).to_have_text(
        "typed model answered", timeout=15000
    )
    [body] = bodies(fake_provider)
    assert (body["model"], body["reasoning_effort"]) == ("my-own-model", "low")


def test_a_rule_added_in_the_settings_decides_the_next_matching_call(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider, tmp_path: Path
) -> None:
    (tmp_path / "keep.txt").write_text("precious\n")
    sid = create_session(agent_service, directory=str(tmp_path))
    open_chat(page, agent_service, sid)
    page.locator(".chat-header .settings-button").click()
    editor = page.locator(".rules-editor")
    expect(editor.locator(".rules-defaults summary")).to_contain_text("Built-in rules")
    editor.locator(".rules-add").click()
    row = editor.locator(".rule-row").last
    row.locator("select[name=tool]").select_option("shell")
    row.locator("input[name=pattern]").fill("rm *")
    row.locator("select[name=action]").select_option("deny")
    editor.locator(".rules-save").click()
    expect(editor.locator(".rules-save")).to_have_text("Applied")
    rules = agent_service.request("GET", "/api/config/permissions")["rules"]
    assert rules == [{"tool": "shell", "pattern": "rm *", "action": "deny"}]
    fake_provider.script(
        tool_call_reply(Call("c_rm", "shell", {"command": "rm keep.txt"})), text_reply("ok")
    )
    # Typed the instant the dialog is closed, the prompt lands: the page behind a modal dialog
    # is inert (what is typed there goes nowhere) until the dialog closes, and it closes in the
    # task that cancels it, not a frame later.
    page.evaluate(CLOSED_WITH_ITS_CANCEL)
    page.keyboard.press("Escape")
    box = page.locator(".composer-input")
    box.fill("clean up")
    assert page.evaluate("() => window.__settingsOpenAfterCancel") is False
    expect(box).to_have_value("clean up")
    assert page.evaluate("sid => localStorage.getItem('desk.draft.' + sid)", sid) == "clean up"
    box.press("Enter")
    expect(page.locator(".msg-user").last).to_contain_text("clean up", timeout=15000)
    expect(page.locator(".msg-assistant .markdown").last).to_have_text("ok", timeout=15000)
    log = agent_service.request("GET", f"/api/session/{sid}/log")
    [failed] = [e for e in log if e["type"] == "session.tool.failed"]
    assert failed["data"]["error"]["type"] == "permission.denied"
    assert (tmp_path / "keep.txt").read_text() == "precious\n"


def test_while_a_turn_runs_enter_queues_and_ctrl_enter_steers(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    gate = fake_provider.gate()
    first = tool_call_reply(Call("c_read", "read", {"path": "a.txt"}))
    first.gate, first.gate_after = gate.event, 1
    fake_provider.script(first, text_reply("steered answer"), text_reply("queued answer"))
    sid = create_session(agent_service, directory=str(tmp_path))
    open_chat(page, agent_service, sid)
    box = page.locator(".composer-input")
    box.fill("start")
    box.press("Enter")
    expect(page.locator(".chat-header .session-status")).to_have_attribute("data-status", "busy")
    expect(box).to_have_attribute(
        "placeholder", "Enter queues for after this turn · Ctrl+Enter steers it now"
    )
    expect(page.locator(".composer-steer")).to_be_visible()
    box.fill("for later")
    box.press("Enter")
    box.fill("change course")
    box.press("Control+Enter")
    wait_until(
        lambda: (
            len(
                [
                    e
                    for e in agent_service.request("GET", f"/api/session/{sid}/log")
                    if e["type"] == "session.prompted"
                ]
            )
            == 3
        ),
        10,
        what="three prompts",
    )
    modes = [
        e["data"]["mode"]
        for e in agent_service.request("GET", f"/api/session/{sid}/log")
        if e["type"] == "session.prompted"
    ]
    assert modes == ["queue", "queue", "steer"]
    gate.open()
    expect(page.locator(".msg-assistant .markdown").last).to_have_text(
        "queued answer", timeout=15000
    )
    second, third = bodies(fake_provider)[1:3]
    assert "change course" in json.dumps(second["messages"])
    assert "for later" not in json.dumps(second["messages"])
    assert "for later" in json.dumps(third["messages"][-1])
    assert fake_provider.invalid_count == 0


def test_the_header_lists_the_instruction_files_in_effect(
    page: Page, agent_service: Service, tmp_path: Path
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "AGENTS.md").write_text("Use tabs.\n")
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "CLAUDE.md").write_text("Use Prettier.\n")
    sid = create_session(agent_service, directory=str(tmp_path / "web"))
    open_chat(page, agent_service, sid)
    files = page.locator(".chat-header .instruction-files")
    expect(files.locator(":scope > summary")).to_contain_text("instruction files")
    files.locator(":scope > summary").click()
    shown = files.locator("li")
    expect(shown.last).to_contain_text(str(tmp_path / "web" / "CLAUDE.md"))
    expect(shown.nth(shown.count() - 2)).to_contain_text(str(tmp_path / "AGENTS.md"))
    # A file opens on what the model reads of it, as text.
    expect(shown.last.locator(".instruction-text")).not_to_be_visible()
    shown.last.locator("summary").click()
    expect(shown.last.locator(".instruction-text")).to_have_text("Use Prettier.\n")
