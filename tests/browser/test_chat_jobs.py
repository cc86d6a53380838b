"""Jobs in the chat, in Chromium against a real `desk serve` whose agent talks to the strict
fake provider: the jobs panel follows a background command live (running with elapsed time,
then done), its notice card shows the real output once, Cancel ends a running job, a foreground
call moves to the background, and a job's card opens its terminal tab view-only."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_agent import agent_runs, job_row, open_terminal_from, prompt, shell_call
from tests.support.browser_chat import open_chat
from tests.support.browser_terminals import buffer_lines, terminal, wait_attached
from tests.support.chat import create_session
from tests.support.fake_provider import Call, text_reply, tool_call_reply
from tests.support.fake_provider_thread import ThreadedFakeProvider
from tests.support.service import Service
from tests.support.sessions import recorded_jobs
from tests.support.wait import wait_until

pytestmark = pytest.mark.browser


def test_a_background_job_shows_running_with_elapsed_time_then_done_and_its_notice_once(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    agent_runs(
        page,
        agent_service,
        fake_provider,
        tool_call_reply(shell_call("sleep 3; echo out-$((6*7))")),
        "started",
        "noted",
    )

    row = job_row(page)
    expect(row).to_have_attribute("data-status", "running", timeout=15000)
    expect(row.locator(".job-status")).to_have_attribute("aria-label", "Running")
    expect(row.locator(".job-title")).to_have_text("sleep 3; echo out-$((6*7))")
    elapsed = row.locator(".job-elapsed")
    expect(elapsed).to_have_text(re.compile(r"^running [0-3] s$"))
    first = elapsed.inner_text()
    expect(elapsed).not_to_have_text(first)  # it ticks while the job runs
    expect(row).to_have_attribute("data-status", "running")
    expect(row.locator(".job-cancel")).to_be_visible()

    expect(row).to_have_attribute("data-status", "completed", timeout=15000)
    expect(row.locator(".job-status")).to_have_attribute("aria-label", "Done")
    expect(row.locator(".job-cancel")).to_have_count(0)
    expect(row.locator(".job-elapsed")).to_have_text(re.compile(r"^ran [0-9] s$"))
    expect(page.locator(".jobs-panel")).not_to_have_attribute("open", "")  # nothing runs

    card = page.locator(".msg-notice[data-source='shell']")
    expect(card).to_have_count(1, timeout=15000)
    expect(card).to_have_attribute("data-state", "completed")
    expect(card.locator(".notice-title")).to_have_text("sleep 3; echo out-$((6*7))")
    card.locator("summary").click()
    output = card.locator(".notice-output")
    expect(output).to_contain_text("out-42")
    expect(output).to_contain_text("[exit code 0]")
    assert output.inner_text().count("out-42") == 1
    # The model got it too, and answered: every request a strict provider accepts.
    expect(page.locator(".msg-assistant").last).to_contain_text("noted", timeout=15000)
    expect(card).to_have_count(1)
    assert fake_provider.invalid_count == 0


def test_cancel_in_the_jobs_panel_ends_a_running_job_as_cancelled(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    sid = agent_runs(
        page,
        agent_service,
        fake_provider,
        tool_call_reply(shell_call("sleep 300")),
        "started",
        "noted",
    )
    row = job_row(page)
    expect(row).to_have_attribute("data-status", "running", timeout=15000)
    row.locator(".job-cancel").click()
    expect(row).to_have_attribute("data-status", "cancelled", timeout=15000)
    expect(row.locator(".job-status")).to_have_attribute("aria-label", "Cancelled")
    card = page.locator(".msg-notice[data-source='shell']")
    expect(card).to_have_attribute("data-state", "cancelled", timeout=15000)
    jobs = agent_service.request("GET", f"/api/session/{sid}/jobs")
    assert [j["status"] for j in jobs] == ["cancelled"]
    assert fake_provider.invalid_count == 0


def test_a_foreground_call_moves_to_the_background_from_the_panel(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    agent_runs(
        page,
        agent_service,
        fake_provider,
        tool_call_reply(shell_call("sleep 300", background=False)),
        "it is in the background",
    )
    row = job_row(page)
    expect(row).to_have_attribute("data-status", "running", timeout=15000)
    expect(row.locator(".job-tag")).to_have_text("the turn waits for it")
    page.locator(".jobs-background").click()
    expect(row.locator(".job-tag")).to_have_count(0, timeout=15000)
    expect(page.locator(".jobs-background")).to_have_count(0)
    # The turn went on: the tool card completed and the model answered.
    tool = page.locator(".part-tool[data-status='completed']")
    expect(tool).to_have_count(1, timeout=15000)
    expect(page.locator(".msg-assistant").last).to_contain_text("it is in the background")
    row.locator(".job-cancel").click()
    expect(row).to_have_attribute("data-status", "cancelled", timeout=15000)
    assert fake_provider.invalid_count == 0


def test_the_job_card_opens_its_terminal_tab_view_only_with_the_commands_output(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    sid = agent_runs(
        page,
        agent_service,
        fake_provider,
        tool_call_reply(shell_call("echo term-$((6*7)); sleep 300")),
        "started",
        "noted",
    )
    row = job_row(page)
    expect(row).to_have_attribute("data-status", "running", timeout=15000)
    terminal_id = agent_service.request("GET", f"/api/session/{sid}/jobs")[0]["terminal_id"]

    open_terminal_from(page, row.locator(".job-open-terminal"), terminal_id)
    wait_attached(page, terminal_id, role="observer")
    expect(page.locator("#view-only-bar")).to_be_visible()
    expect(page.locator("#view-only-bar span")).to_have_text("View only — the agent's command.")
    wait_until(lambda: "term-42" in buffer_lines(page, terminal_id), what="output in xterm")
    assert terminal(page, terminal_id)["group"] == sid

    page.locator("#take-control").click()
    wait_attached(page, terminal_id, role="controller")
    expect(page.locator("#view-only-bar")).to_be_hidden()

    row.locator(".job-cancel").click()
    expect(row).to_have_attribute("data-status", "cancelled", timeout=15000)
    assert fake_provider.invalid_count == 0


def test_the_notice_card_and_the_tool_card_open_the_jobs_terminal(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    sid = agent_runs(
        page,
        agent_service,
        fake_provider,
        tool_call_reply(shell_call("echo card-$((6*7))")),
        "started",
        "noted",
    )
    card = page.locator(".msg-notice[data-source='shell']")
    expect(card).to_have_attribute("data-state", "completed", timeout=15000)
    terminal_id = agent_service.request("GET", f"/api/session/{sid}/jobs")[0]["terminal_id"]
    open_terminal_from(page, card.locator(".job-open-terminal"), terminal_id)
    wait_until(lambda: "card-42" in buffer_lines(page, terminal_id), what="output in xterm")

    open_terminal_from(page, page.locator(".msg-assistant .job-open-terminal"), terminal_id)
    assert fake_provider.invalid_count == 0


def test_a_subagents_notice_card_and_job_row_open_the_child_session(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    fake_provider.script(
        tool_call_reply(
            Call(
                "call_sub",
                "subagent",
                {"description": "count files", "prompt": "count", "background": True},
            )
        ),
        text_reply("helper-answer"),  # the child's answer, or the parent's ack: either order
        text_reply("helper-answer"),
        text_reply("parent read it"),
    )
    sid = create_session(agent_service)
    open_chat(page, agent_service, sid)
    prompt(agent_service, sid)
    card = page.locator(".msg-notice[data-source='subagent']")
    expect(card).to_have_attribute("data-state", "completed", timeout=20000)
    expect(card.locator(".notice-title")).to_have_text("count files")
    card.locator(".notice-kind").click()
    expect(card.locator(".notice-output")).to_contain_text("helper-answer")
    (child,) = [
        s["id"] for s in agent_service.request("GET", "/api/session") if s["parent_id"] == sid
    ]
    row = page.locator(f".jobs-panel .job[data-id='{child}']")
    expect(row).to_have_attribute("data-status", "completed")
    expect(row.locator(".job-title")).to_have_text("count files")

    card.locator(".job-open-session").click()
    page.wait_for_function("(id) => window.__desk.chat().active === id", arg=child)
    expect(page.locator(".chat")).to_have_attribute("data-session", child)

    page.evaluate("(id) => window.__desk.selectSession(id)", sid)
    # Nothing runs: the panel is collapsed; the person opens it.
    expect(page.locator(".jobs-panel")).not_to_have_attribute("open", "")
    page.locator(".jobs-panel summary").click()
    row.locator(".job-open-session").click()
    page.wait_for_function("(id) => window.__desk.chat().active === id", arg=child)
    assert fake_provider.invalid_count == 0


def test_a_job_that_ends_while_the_service_is_down_is_not_left_running_after_the_reconnect(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider, tmp_path: Path
) -> None:
    gate, done = tmp_path / "go", tmp_path / "done"
    command = f"while [ ! -e {gate} ]; do sleep 0.05; done; echo late-$((6*7)); touch {done}"
    agent_runs(
        page, agent_service, fake_provider, tool_call_reply(shell_call(command)), "started", "noted"
    )
    row = job_row(page)
    expect(row).to_have_attribute("data-status", "running", timeout=15000)
    expect(page.locator(".msg-assistant").last).to_contain_text("started", timeout=15000)

    agent_service.kill()
    page.wait_for_function("() => window.__desk.state().connection !== 'connected'")
    gate.touch()
    wait_until(done.exists, what="the command ended while the service was down")
    agent_service.start()
    # The successor settles the job before it serves: only the page's re-read can tell it.
    page.wait_for_function("() => window.__desk.state().connection === 'connected'")
    expect(page.locator(".jobs-panel .job[data-status='running']")).to_have_count(0, timeout=15000)
    card = page.locator(".msg-notice[data-source='shell']")
    expect(card).to_have_count(1, timeout=15000)
    card.locator(".notice-kind").click()
    expect(card.locator(".notice-output")).to_contain_text("late-42")
    assert fake_provider.invalid_count == 0


def test_an_ended_job_stays_in_the_panel_after_a_kill_9_of_the_service_and_a_reload(
    page: Page, agent_service: Service, fake_provider: ThreadedFakeProvider
) -> None:
    call = shell_call("echo kept-$((40+2))", background=False)
    agent_runs(page, agent_service, fake_provider, tool_call_reply(call), "ran it")
    row = job_row(page)
    expect(row).to_have_attribute("data-status", "completed", timeout=15000)
    expect(page.locator(".msg-assistant").last).to_contain_text("ran it", timeout=15000)
    database = agent_service.data_dir / "desk.sqlite3"
    wait_until(lambda: recorded_jobs(database) == 1, what="the ended job's record")
    agent_service.kill()
    agent_service.start()
    page.reload()
    row = job_row(page)
    expect(row).to_have_attribute("data-status", "completed", timeout=15000)
    expect(row.locator(".job-title")).to_have_text("echo kept-$((40+2))")
    expect(page.locator(".jobs-panel .job")).to_have_count(1)
