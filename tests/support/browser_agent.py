"""An agent's turn in the page, for the chat browser tests against the strict fake provider:
prompting, scripted shell calls, the jobs panel's rows, a job's terminal opened from a card, and
the ask-mode permission card."""

from __future__ import annotations

from playwright.sync_api import Locator, Page, expect

from tests.support.browser_chat import open_chat
from tests.support.chat import create_session
from tests.support.fake_provider import Call, Reply, text_reply, tool_call_reply
from tests.support.fake_provider_thread import ThreadedFakeProvider
from tests.support.service import Service
from tests.support.wait import wait_until


def prompt(service: Service, sid: str, text: str = "go") -> None:
    """Prompts the session through the API."""
    service.request("POST", f"/api/session/{sid}/prompt", {"text": text})


def shell_call(command: str, call_id: str = "call_1", background: bool = True) -> Call:
    """The model's `shell` call of `command` (in the background unless told otherwise)."""
    args: dict[str, object] = {"command": command}
    if background:
        args["background"] = True
    return Call(call_id, "shell", args)


def job_row(page: Page, call_id: str = "call_1") -> Locator:
    """The jobs panel's row of the job the call `call_id` started."""
    return page.locator(f".jobs-panel .job[data-id$=':{call_id}']")


def agent_runs(
    page: Page, service: Service, fake: ThreadedFakeProvider, call: Reply, *answers: str
) -> str:
    """A session open in the page whose first answer is `call` (then `answers`); prompted."""
    fake.script(call, *(text_reply(a) for a in answers))
    sid = create_session(service)
    open_chat(page, service, sid)
    prompt(service, sid)
    return sid


def open_terminal_from(page: Page, button: Locator, terminal_id: str) -> None:
    """Another tab in front first, so opening the job's tab is a visible change; then the
    card's "Open terminal" brings the job's tab to the front."""
    page.evaluate("() => window.__desk.newTerminal(null)")
    wait_until(
        lambda: page.evaluate("() => window.__desk.state().activeTerminal") != terminal_id,
        what="another terminal active",
    )
    button.click()
    page.wait_for_function("(id) => window.__desk.state().activeTerminal === id", arg=terminal_id)


# The command of the shell call that waits for the person's permission.
ASK_COMMAND = "echo allowed-$((6*7))"


def ask_mode_session(page: Page, service: Service, directory: str = "/tmp") -> str:
    """A session opened in the page and switched to `ask` with the header's switch."""
    sid = create_session(service, directory=directory)
    open_chat(page, service, sid)
    switch = page.get_by_label("Permission mode")
    expect(switch).to_have_value("auto")
    switch.select_option("ask")
    expect(switch).to_have_value("ask")
    # The select shows the choice at once; the PATCH lands a moment later.
    wait_until(
        lambda: service.request("GET", f"/api/session/{sid}")["permission_mode"] == "ask",
        what="permission mode saved",
    )
    return sid


def waiting_shell_call(
    page: Page, service: Service, fake: ThreadedFakeProvider, answer: str
) -> tuple[str, Locator]:
    """An ask-mode session whose agent called `shell` with ASK_COMMAND: the session and the
    permission card waiting in the page (the model says `answer` once the call settles)."""
    fake.script(
        tool_call_reply(Call("call_1", "shell", {"command": ASK_COMMAND})), text_reply(answer)
    )
    sid = ask_mode_session(page, service)
    prompt(service, sid)
    card = page.locator(".permission-card[data-call='call_1']")
    expect(card).to_be_visible(timeout=15000)
    return sid, card
