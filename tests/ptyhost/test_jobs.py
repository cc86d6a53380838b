"""Jobs in the PTY host: the agent's commands as terminals keyed by session and tool call."""

from __future__ import annotations

import asyncio
import base64
import re
from pathlib import Path
from typing import Any

import pytest

from desktop.config import Settings
from desktop.process.liveness import is_alive
from desktop.ptyhost.client import PtyHostClient
from desktop.ptyhost.jobs import HEAD_KEEP
from desktop.ptyhost.protocol import PtyHostError
from desktop.ptyhost.validation import JOB_NOT_FOUND
from tests.support.host import HostFactory, attach
from tests.support.wait import DEADLINE, wait_for

KEY = "job:ses_1:call_1"


async def gone(host: PtyHostClient, key: str) -> bool:
    try:
        await host.job_get(key)
    except PtyHostError as exc:
        return exc.type == JOB_NOT_FOUND
    return False


async def run(host: PtyHostClient, command: str, cwd: Path, key: str = KEY, **kw: Any) -> bytes:
    await host.job_start(key, command, str(cwd), **kw)
    info = await asyncio.wait_for(host.job_wait(key), DEADLINE)
    assert info["status"] == "exited"
    return await output(host, key)


async def output(host: PtyHostClient, key: str = KEY) -> bytes:
    answer = await host.job_output(key)
    return base64.b64decode(str(answer["head"])) + base64.b64decode(str(answer["tail"]))


async def test_a_second_start_with_the_same_key_returns_the_first_job_and_never_reruns_it(
    host: PtyHostClient, tmp_path: Path
) -> None:
    command = "echo ran >> runs.txt; echo started"
    first, second = await asyncio.gather(
        host.job_start(KEY, command, str(tmp_path)), host.job_start(KEY, command, str(tmp_path))
    )
    await host.job_wait(KEY)
    third = await host.job_start(KEY, command, str(tmp_path))
    assert [first["created"], second["created"], third["created"]] == [True, False, False]
    ids = {_job(answer)["terminal_id"] for answer in (first, second, third)}
    assert len(ids) == 1
    assert (tmp_path / "runs.txt").read_text() == "ran\n"
    assert _job(third)["status"] == "exited"
    assert _job(third)["exit_code"] == 0


async def test_the_same_key_with_another_command_is_a_conflict_not_a_second_run(
    host: PtyHostClient, tmp_path: Path
) -> None:
    await host.job_start(KEY, "true", str(tmp_path))
    with pytest.raises(PtyHostError) as refused:
        await host.job_start(KEY, "rm -rf nothing", str(tmp_path))
    assert (refused.value.type, refused.value.status) == ("job.conflict", 409)
    assert len(await host.job_list()) == 1


async def test_a_job_is_a_tab_in_its_sessions_group_marked_as_a_job(
    host: PtyHostClient, tmp_path: Path
) -> None:
    await host.job_start(KEY, "echo hi", str(tmp_path))
    await host.job_start("job:ses_2:call_9", "echo other", str(tmp_path))
    [tab] = await host.list(group="ses_1")
    assert tab["job"] == {
        "key": KEY,
        "session_id": "ses_1",
        "call_id": "call_1",
        "command": "echo hi",
    }
    assert tab["args"] == ["-c", "echo hi"]
    assert tab["cwd"] == str(tmp_path)
    [job] = await host.job_list(session="ses_1")
    assert job["key"] == KEY
    assert job["terminal_id"] == tab["id"]
    assert len(await host.job_list()) == 2


async def test_the_job_environment_is_non_interactive_without_the_api_key_and_stdin_is_the_pty(
    start_host: HostFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DESK_API_KEY", "sk-must-not-leak")
    host = await start_host()
    command = (
        'echo "key=${DESK_API_KEY-unset} pager=$PAGER git_pager=$GIT_PAGER '
        'prompt=$GIT_TERMINAL_PROMPT term=$TERM"; [ -t 0 ] && echo stdin-is-a-tty; pwd'
    )
    text = (await run(host, command, tmp_path)).decode()
    assert "key=unset pager=cat git_pager=cat prompt=0 term=dumb" in text
    assert "stdin-is-a-tty" in text
    assert str(tmp_path) in text
    assert "sk-must-not-leak" not in text


async def test_a_job_reads_its_stdin_from_the_pty_while_other_requests_are_answered(
    host: PtyHostClient, tmp_path: Path
) -> None:
    started = await host.job_start(KEY, "read line; echo got-$line", str(tmp_path))
    waiting = asyncio.ensure_future(host.job_wait(KEY))
    assert (await host.ping())["terminals"] == 1  # the wait holds up nothing
    assert not waiting.done()
    reader = await attach(host, str(_job(started)["terminal_id"]))
    await reader.type_line("answer")
    info = await asyncio.wait_for(waiting, DEADLINE)
    assert info["status"] == "exited"
    assert info["exit_code"] == 0
    assert b"got-answer" in await output(host)


async def test_a_wait_with_within_returns_the_running_job_when_time_is_up(
    host: PtyHostClient, tmp_path: Path
) -> None:
    await host.job_start(KEY, "read never", str(tmp_path))
    info = await host.job_wait(KEY, within=0.1)
    assert info["status"] == "running"
    assert info["exit_code"] is None


async def test_timeout_kills_the_whole_process_group(host: PtyHostClient, tmp_path: Path) -> None:
    command = "sleep 300 & echo child=$!; wait"
    started = await host.job_start(KEY, command, str(tmp_path), kill_after=0.5)
    reader = await attach(host, str(_job(started)["terminal_id"]))
    await reader.until(lambda r: re.search(rb"child=(\d+)\r\n", r.output), what="child pid")
    match = re.search(rb"child=(\d+)", reader.output)
    assert match is not None
    child = int(match.group(1))
    info = await asyncio.wait_for(host.job_wait(KEY), DEADLINE)
    assert info["reason"] == "timeout"
    assert info["exit_code"] == 128 + 15  # the shell died of SIGTERM
    await wait_for(lambda: not is_alive(child), what="the command's child to die")


async def test_kill_terms_the_group_then_sigkills_what_ignores_sigterm(
    host: PtyHostClient, tmp_path: Path
) -> None:
    started = await host.job_start(KEY, "trap '' TERM; echo ready; sleep 300", str(tmp_path))
    reader = await attach(host, str(_job(started)["terminal_id"]))
    await reader.until_output(b"ready\r\n")
    killed = await host.job_kill(KEY)
    assert killed["status"] == "running"  # SIGTERM is ignored: the grace period runs
    info = await asyncio.wait_for(host.job_wait(KEY), DEADLINE)
    assert (info["reason"], info["exit_code"]) == ("killed", 128 + 9)


async def test_a_long_output_keeps_its_head_although_the_ring_dropped_it(
    start_host: HostFactory, tmp_path: Path
) -> None:
    host = await start_host(pty_ring_bytes=64 * 1024)
    await run(host, "seq 1 100000", tmp_path)
    answer = await host.job_output(KEY, tail_bytes=8192)
    head = base64.b64decode(str(answer["head"]))
    tail = base64.b64decode(str(answer["tail"]))
    assert len(head) == HEAD_KEEP
    assert head.startswith(b"1\r\n2\r\n3\r\n")
    assert len(tail) == 8192
    assert tail.endswith(b"99999\r\n100000\r\n")
    total = len(b"".join(b"%d\r\n" % n for n in range(1, 100001)))
    assert answer["total"] == total
    assert answer["tail_start"] == total - 8192
    assert answer["dropped"] == total - 8192 - HEAD_KEEP


async def test_a_short_output_comes_whole_with_nothing_dropped(
    host: PtyHostClient, tmp_path: Path
) -> None:
    await run(host, "printf 'one\\ntwo\\n'", tmp_path)
    answer = await host.job_output(KEY)
    assert answer["head"] == ""
    assert answer["dropped"] == 0
    assert base64.b64decode(str(answer["tail"])) == b"one\r\ntwo\r\n"


BAD_STARTS: list[tuple[dict[str, object], str]] = [
    ({"command": "true"}, "`key`"),
    ({"key": "pty_123", "command": "true"}, "`key`"),
    ({"key": "job:ses 1:call_1", "command": "true"}, "`key`"),
    ({"key": "job:ses_1:call:1", "command": "true"}, "`key`"),
    ({"key": "job::call_1", "command": "true"}, "`key`"),
    ({"key": f"job:{'s' * 129}:c", "command": "true"}, "`key`"),
    ({"key": "job:ses_1:call/../1", "command": "true"}, "`key`"),
    ({"key": KEY}, "`command`"),
    ({"key": KEY, "command": ""}, "`command`"),
    ({"key": KEY, "command": "   "}, "`command`"),
    ({"key": KEY, "command": 5}, "`command`"),
    ({"key": KEY, "command": "echo a\0b"}, "NUL"),
    ({"key": KEY, "command": "x" * (128 * 1024)}, "`command`"),
    ({"key": KEY, "command": "true", "cwd": "relative/dir"}, "absolute"),
    ({"key": KEY, "command": "true", "cwd": None}, "absolute"),
    ({"key": KEY, "command": "true", "cwd": "/no/such/dir"}, "not a directory"),
    ({"key": KEY, "command": "true", "timeout": -1}, "`timeout`"),
    ({"key": KEY, "command": "true", "timeout": 0}, "`timeout`"),
    ({"key": KEY, "command": "true", "timeout": "5"}, "`timeout`"),
    ({"key": KEY, "command": "true", "timeout": True}, "`timeout`"),
    ({"key": KEY, "command": "true", "timeout": 1e12}, "`timeout`"),
    ({"key": KEY, "command": "true", "env": {"A=B": "x"}}, "`env`"),
    ({"key": KEY, "command": "true", "env": ["A"]}, "`env`"),
    ({"key": KEY, "command": "true", "size": {"cols": 0, "rows": 5}}, "`size.cols`"),
]


@pytest.mark.parametrize(("params", "named"), BAD_STARTS)
async def test_a_bad_job_start_is_refused_with_a_clear_error_and_creates_nothing(
    shared_host: PtyHostClient, tmp_path: Path, params: dict[str, object], named: str
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    params = {"cwd": str(work), **params}
    with pytest.raises(PtyHostError) as refused:
        await shared_host.request("job_start", **params)
    assert refused.value.status == 400
    assert named in refused.value.message
    assert await shared_host.job_list() == []
    assert await shared_host.list() == []
    assert list(work.iterdir()) == []


@pytest.mark.parametrize(
    ("op", "params", "status", "named"),
    [
        ("job_get", {"key": "job:bad key:c"}, 400, "`key`"),
        ("job_get", {"key": "job:ses_1:unknown"}, 404, "No job"),
        ("job_wait", {"key": KEY, "within": -1}, 400, "`within`"),
        ("job_output", {"key": KEY, "tail_bytes": 0}, 400, "`tail_bytes`"),
        ("job_kill", {}, 400, "`key`"),
        ("job_collect", {"key": 7}, 400, "`key`"),
        ("job_remove", {}, 400, "exactly one"),
        ("job_remove", {"key": KEY, "session": "ses_1"}, 400, "exactly one"),
        ("job_list", {"session": "bad session"}, 400, "`session`"),
        ("job_remove", {"session": "a:b"}, 400, "`session`"),
    ],
)
async def test_bad_job_requests_are_refused_and_change_nothing(
    host: PtyHostClient,
    tmp_path: Path,
    op: str,
    params: dict[str, object],
    status: int,
    named: str,
) -> None:
    await run(host, "true", tmp_path)
    before = await host.job_list()
    with pytest.raises(PtyHostError) as refused:
        await host.request(op, **params)
    assert refused.value.status == status
    assert named in refused.value.message
    assert await host.job_list() == before


async def test_a_collected_finished_job_stays_with_its_end_time_until_the_service_removes_it(
    host: PtyHostClient, tmp_path: Path
) -> None:
    """Retention is the service's rule (it knows which notices and calls still need a job):
    the host keeps a finished job, collected or not, and says when it ended."""
    other = "job:ses_1:call_2"
    await run(host, "echo a", tmp_path)
    await run(host, "echo b", tmp_path, key=other)
    collected = await host.job_collect(KEY)
    assert collected["collected"] is True
    assert isinstance(collected["ended"], int)
    assert collected["ended"] >= collected["started"]  # type: ignore[operator]
    kept = await host.job_get(KEY)
    assert (kept["status"], kept["collected"]) == ("exited", True)
    assert await host.job_remove(KEY) == {"removed": 1}
    assert await gone(host, KEY)
    assert [tab["job"] for tab in await host.list()] == [
        {"key": other, "session_id": "ses_1", "call_id": "call_2", "command": "echo b"}
    ]


async def test_remove_refuses_a_running_job_and_a_session_removal_stops_its_jobs(
    host: PtyHostClient, tmp_path: Path
) -> None:
    started = await host.job_start(KEY, "sleep 300", str(tmp_path))
    await host.job_start("job:ses_2:call_1", "true", str(tmp_path))
    with pytest.raises(PtyHostError) as refused:
        await host.job_remove(KEY)
    assert (refused.value.type, refused.value.status) == ("job.running", 409)
    assert await host.job_remove(session="ses_1") == {"removed": 1}
    assert await gone(host, KEY)
    pid = _job(started)["pid"]
    assert isinstance(pid, int)
    await wait_for(lambda: not is_alive(pid), what="the removed job's process to end")
    await host.job_wait("job:ses_2:call_1")
    assert await host.job_remove("job:ses_2:call_1") == {"removed": 1}
    assert await host.job_list() == []
    assert await host.list() == []


async def test_closing_a_jobs_tab_kills_the_command_but_keeps_its_result(
    host: PtyHostClient, tmp_path: Path
) -> None:
    started = await host.job_start(KEY, "echo before; sleep 300", str(tmp_path))
    reader = await attach(host, str(_job(started)["terminal_id"]))
    await reader.until_output(b"before\r\n")
    await host.delete(str(_job(started)["terminal_id"]))
    info = await asyncio.wait_for(host.job_wait(KEY), DEADLINE)
    assert info["status"] == "exited"
    assert info["reason"] == "killed"
    assert b"before" in await output(host)
    assert await host.list() == []


async def test_stop_all_ends_jobs_without_saving_them_and_the_next_host_has_none(
    start_host: HostFactory, settings: Settings, tmp_path: Path
) -> None:
    host = await start_host()
    started = await host.job_start(KEY, "sleep 300", str(tmp_path))
    pid = _job(started)["pid"]
    assert isinstance(pid, int)
    assert await host.shutdown(save=True) == {"saved": 0}
    assert not is_alive(pid)
    assert list(settings.saved_terminals_dir.glob("*.json")) == []
    successor = await start_host()
    assert await gone(successor, KEY)
    assert await successor.list() == []


def _job(answer: dict[str, object]) -> dict[str, object]:
    job = answer["job"]
    assert isinstance(job, dict)
    return job
