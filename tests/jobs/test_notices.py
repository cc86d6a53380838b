"""Notices: admitted with their inbox row and the marker's removal in one transaction,
exactly once whatever happens, waking the session only when asked to."""

from __future__ import annotations

import asyncio
import json

from desktop.events.bus import draft
from desktop.jobs.model import (
    Job,
    JobStore,
    ShellRecovery,
    SubagentRecovery,
)
from desktop.jobs.notices import (
    SERVER_RESTARTED,
    admit,
    shell_notice,
    stored_shell_notice,
    subagent_notice,
)
from desktop.jobs.registry import JobRegistry
from tests.support.jobs import Stores, create_session, rows


def shell_marker(session: str, status: str = "running", **extra: str) -> Job:
    return Job.recovered(
        f"job:{session}:call_1",
        f"msg_{session}",
        ShellRecovery(session, "call_1", f"job:{session}:call_1", 'echo "a" & <b>'),
        status,  # type: ignore[arg-type]
        **extra,
    )


async def test_admission_writes_message_and_inbox_and_removes_the_marker_together(
    stores: Stores,
) -> None:
    bus = await stores.open()
    await create_session(bus, "ses_n")
    marker = shell_marker("ses_n", "completed", output="hello\n[exit code 0]")
    await JobStore(bus.store).put([marker])
    woken: list[str] = []

    assert await admit(bus, stored_shell_notice(marker), wake=woken.append) == "admitted"
    assert woken == ["ses_n"]
    assert stores.owed_on_disk() == {}
    (message,) = await rows(bus, "SELECT id, type, data FROM message WHERE session_id = 'ses_n'")
    assert message[0] == marker.notification_id
    assert message[1] == "synthetic"
    text = json.loads(str(message[2]))["text"]
    assert 'state="completed"' in text
    assert "hello\n[exit code 0]" in text
    inbox = await rows(bus, "SELECT id, mode, kind FROM inbox WHERE session_id = 'ses_n'")
    assert inbox == [(marker.notification_id, "steer", "synthetic")]


async def test_a_second_admission_is_refused_and_still_acknowledges_the_marker(
    stores: Stores,
) -> None:
    bus = await stores.open()
    await create_session(bus, "ses_d")
    marker = shell_marker("ses_d")
    notice = stored_shell_notice(marker)
    assert await admit(bus, notice) == "admitted"
    await JobStore(bus.store).put([marker])  # as if a crash left it behind
    woken: list[str] = []
    results = await asyncio.gather(*(admit(bus, notice, wake=woken.append) for _ in range(5)))
    assert results == ["duplicate"] * 5
    assert woken == []
    assert stores.owed_on_disk() == {}
    count = await rows(bus, "SELECT COUNT(*) FROM message WHERE session_id = 'ses_d'")
    assert count == [(1,)]
    assert await rows(bus, "SELECT COUNT(*) FROM inbox") == [(1,)]


async def test_a_notice_for_a_deleted_session_acknowledges_its_marker(stores: Stores) -> None:
    bus = await stores.open()
    await create_session(bus, "ses_gone")
    marker = shell_marker("ses_gone")
    await JobStore(bus.store).put([marker])
    await bus.publish(draft("ses_gone", "session.deleted", {}))
    assert await admit(bus, stored_shell_notice(marker)) == "gone"
    assert stores.owed_on_disk() == {}


async def test_admitting_without_wake_leaves_an_idle_session_unclaimed(stores: Stores) -> None:
    bus = await stores.open()
    await create_session(bus, "ses_idle")
    assert await admit(bus, stored_shell_notice(shell_marker("ses_idle"))) == "admitted"
    assert await rows(bus, "SELECT time_suspended FROM session WHERE id='ses_idle'") == [(None,)]


def test_notice_texts_escape_their_attributes_and_say_what_happened() -> None:
    restarted = stored_shell_notice(shell_marker("ses_t"))
    assert restarted.text.startswith(
        '<shell id="job:ses_t:call_1" state="cancelled" command="echo &quot;a&quot; &amp; '
        '&lt;b&gt;">\n'
    )
    assert SERVER_RESTARTED in restarted.text
    assert restarted.text.endswith("\n</shell>")
    assert restarted.metadata["state"] == "cancelled"
    assert restarted.metadata["source"] == "shell"
    failed = stored_shell_notice(shell_marker("ses_t", "error", error="boom"))
    assert 'state="error"' in failed.text
    assert "boom" in failed.text
    live = shell_notice(shell_marker("ses_t"), "completed", "out", metadata={"exit_code": 7})
    assert live.metadata["exit_code"] == 7
    sub = Job.recovered(
        "ses_c", "msg_c", SubagentRecovery("ses_p", "ses_c", "explore", 'say "hi"'), "error"
    )
    notice = subagent_notice(sub, "error")
    assert notice.session_id == "ses_p"
    assert notice.text.startswith('<subagent sessionID="ses_c" state="error" description="say ')
    assert "Subagent failed" in notice.text
    assert notice.metadata["child_id"] == "ses_c"


async def test_a_live_completion_notice_is_delivered_once_through_the_registry(
    stores: Stores,
) -> None:
    """The whole path in one process: backgrounded work settles, its notice is admitted,
    its marker is gone, and re-admitting after a simulated crash adds nothing."""
    bus = await stores.open()
    await create_session(bus, "ses_live")
    jobs = JobRegistry(JobStore(bus.store))
    recovery = ShellRecovery("ses_live", "call_l", "job:ses_live:call_l", "make")

    async def work() -> str:
        return "built"

    job = await jobs.start(job_id=recovery.job_key, kind="shell", recovery=recovery, run=work)
    await jobs.background(job.id)
    await jobs.wait(job.id)
    (marker,) = await jobs.pending_background()
    assert marker.status == "completed"
    assert await admit(bus, shell_notice(marker, "completed", marker.output or "")) == "admitted"
    assert await jobs.pending_background() == []
    assert await admit(bus, shell_notice(marker, "completed", "again")) == "duplicate"
    texts = await rows(bus, "SELECT data FROM message WHERE session_id='ses_live'")
    assert len(texts) == 1
    assert "built" in str(texts[0][0])
