"""The shell tool and the service's job runner, against a real PTY host and real processes."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from desktop.config import Settings
from desktop.jobs.host import ShellJobs
from desktop.process.liveness import is_alive
from desktop.ptyhost.client import PtyHostClient
from desktop.tools.base import ToolResult, run_tool
from desktop.tools.output import OUTPUT_BUDGET
from desktop.tools.shell import GONE_TEXT, ShellContext, ShellTool
from tests.support.host import HostFactory
from tests.support.wait import DEADLINE, wait_for

PROJECT = Path(__file__).resolve().parents[2]
SESSION = "ses_1"


@pytest.fixture
async def jobs(host: PtyHostClient, settings: Settings) -> AsyncIterator[ShellJobs]:
    runner = ShellJobs.for_settings(settings)
    yield runner
    await runner.close()


@pytest.fixture
async def shared_jobs(module_daemon: Settings) -> AsyncIterator[ShellJobs]:
    """The job runner on the module's one PTY host, for tests that start nothing on it."""
    runner = ShellJobs.for_settings(module_daemon)
    yield runner
    await runner.close()


def call(workspace: Path, call_id: str = "call_1", **kw: object) -> ShellContext:
    return ShellContext(root=workspace, session_id=SESSION, call_id=call_id, **kw)  # type: ignore[arg-type]


async def shell(jobs: ShellJobs, ctx: ShellContext, **args: object) -> ToolResult:
    return await asyncio.wait_for(run_tool(ShellTool(jobs), args, ctx), DEADLINE)


async def until_running(jobs: ShellJobs, call_id: str = "call_1") -> None:
    async def running() -> bool:
        return (await jobs.find_job(SESSION, call_id)).status == "running"

    await wait_for(running, DEADLINE, "the job to run")


# ----- results --------------------------------------------------------------------------


async def test_the_result_is_the_cleaned_output_and_the_exit_code(
    jobs: ShellJobs, workspace: Path
) -> None:
    command = r"printf '\033[1;31mred\033[0m\n'; printf '0%%\r50%%\r100%%\n'; exit 3"
    result = await shell(jobs, call(workspace), command=command)
    assert result.output == "red\n100%\n[exit code 3]"
    assert not result.error
    assert result.metadata["exit_code"] == 3
    assert result.metadata["adopted"] is False


async def test_a_finished_jobs_result_is_available_to_a_later_client(
    host: PtyHostClient, settings: Settings, workspace: Path
) -> None:
    first = ShellJobs.for_settings(settings)
    started = await first.start_job(SESSION, "call_1", "echo hi-$((1+1))", str(workspace))
    assert (await first.wait_job(started.key)).exit_code == 0
    await first.close()
    later = ShellJobs.for_settings(settings)
    try:
        result = await later.job_result(started.key)
        assert (result.status, result.exit_code, result.output) == ("exited", 0, "hi-2\n")
        again = await shell(later, call(workspace), command="echo hi-$((1+1))")
        assert again.output == "hi-2\n[exit code 0]"
        assert again.metadata["adopted"] is True
    finally:
        await later.close()


async def test_a_long_output_keeps_head_and_tail_and_says_what_was_cut(
    start_host: HostFactory, settings: Settings, workspace: Path
) -> None:
    await start_host(pty_ring_bytes=64 * 1024)
    jobs = ShellJobs.for_settings(settings)
    try:
        result = await shell(jobs, call(workspace), command="seq 1 200000")
    finally:
        await jobs.close()
    lines = result.output.splitlines()
    assert lines[:3] == ["1", "2", "3"]
    assert lines[-2:] == ["200000", "[exit code 0]"]
    [marker] = [line for line in lines if line.startswith("[... ")]
    assert "characters" in marker
    assert "cut from the middle" in marker
    assert "were not kept by the terminal" in marker  # the ring dropped some itself
    assert len(result.output) < OUTPUT_BUDGET + 500
    assert result.metadata["truncated"] is True
    assert result.metadata["dropped_bytes"] > 0


async def test_timeout_kills_the_command_and_its_children_and_says_so(
    jobs: ShellJobs, workspace: Path
) -> None:
    command = "sleep 300 & echo $! > child.pid; wait"
    result = await shell(jobs, call(workspace), command=command, timeout=1)
    assert result.output.endswith("[timed out after 1 s: the command was killed (exit code 143)]")
    child = int((workspace / "child.pid").read_text())
    await wait_for(lambda: not is_alive(child), what="the command's child to die")


async def test_background_returns_at_once_with_the_job_key_and_the_job_keeps_running(
    jobs: ShellJobs, workspace: Path
) -> None:
    result = await shell(jobs, call(workspace), command="read line", background=True)
    assert "job:ses_1:call_1" in result.output
    assert result.metadata["background"] is True
    assert (await jobs.find_job(SESSION, "call_1")).status == "running"


# ----- interrupts, restarts, a dead PTY host ----------------------------------------------


async def test_a_user_interrupt_kills_the_running_command(jobs: ShellJobs, workspace: Path) -> None:
    interrupted = asyncio.Event()
    ctx = call(workspace, interrupted=interrupted)
    task = asyncio.ensure_future(run_tool(ShellTool(jobs), {"command": "sleep 300"}, ctx))
    await until_running(jobs)
    interrupted.set()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    state = await asyncio.wait_for(jobs.wait_job("job:ses_1:call_1"), DEADLINE)
    assert (state.status, state.reason) == ("exited", "killed")


async def test_a_cancellation_without_interrupt_leaves_the_command_for_the_successor(
    jobs: ShellJobs, workspace: Path
) -> None:
    command = "while [ ! -e go ]; do sleep 0.05; done; echo done-$((6*7))"
    ctx = call(workspace, interrupted=asyncio.Event())
    task = asyncio.ensure_future(run_tool(ShellTool(jobs), {"command": command}, ctx))
    await until_running(jobs)
    task.cancel()  # the service stopping, not the user
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (await jobs.find_job(SESSION, "call_1")).status == "running"
    (workspace / "go").touch()
    result = await shell(jobs, call(workspace), command=command)
    assert result.output == "done-42\n[exit code 0]"
    assert result.metadata["adopted"] is True


SURVIVOR = textwrap.dedent(
    """
    import asyncio, sys
    from desktop.config import load_settings
    from desktop.jobs.host import ShellJobs

    async def main() -> None:
        jobs = ShellJobs.for_settings(load_settings())
        state = await jobs.start_job("ses_1", "call_1", sys.argv[1], sys.argv[2])
        print("started", state.key, flush=True)
        await jobs.wait_job(state.key)
        print("never: killed before the job ends", flush=True)

    asyncio.run(main())
    """
)


async def test_a_job_survives_a_kill_9_of_its_client_process_and_a_new_client_gets_its_output(
    jobs: ShellJobs, workspace: Path
) -> None:
    go = workspace / "go"  # the command ends once the test has seen it outlive its client
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        SURVIVOR,
        f"while [ ! -e {go} ]; do sleep 0.05; done; echo done-$((6*7))",
        str(workspace),
        stdout=asyncio.subprocess.PIPE,
        cwd=PROJECT,
    )
    assert process.stdout is not None
    line = await asyncio.wait_for(process.stdout.readline(), DEADLINE)
    assert line.split() == [b"started", b"job:ses_1:call_1"]
    os.kill(process.pid, signal.SIGKILL)
    assert await process.wait() == -signal.SIGKILL
    found = await jobs.find_job(SESSION, "call_1")
    assert found.status == "running"
    go.touch()
    state = await asyncio.wait_for(jobs.wait_job(found.key), DEADLINE)
    assert (state.status, state.exit_code) == ("exited", 0)
    assert (await jobs.job_result(found.key)).output == "done-42\n"


async def test_a_job_is_reported_gone_when_the_pty_host_dies_with_it(
    host: PtyHostClient, jobs: ShellJobs, workspace: Path
) -> None:
    task = asyncio.ensure_future(shell(jobs, call(workspace), command="sleep 300"))
    await until_running(jobs)
    [job] = await host.job_list()
    pid = job["pid"]
    assert isinstance(pid, int)
    os.kill(host.pid, signal.SIGKILL)
    result = await task
    assert result.error
    assert result.output == GONE_TEXT
    assert result.metadata["status"] == "gone"
    assert (await jobs.find_job(SESSION, "call_1")).status == "gone"
    await wait_for(lambda: not is_alive(pid), what="the job's shell to end with its PTY")


# ----- validation -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ({}, "arguments.command is required"),
        ({"command": ""}, "arguments.command must not be empty"),
        ({"command": "  \n"}, "command must not be blank"),
        ({"command": 5}, "arguments.command must be a string"),
        ({"command": "echo a\0b"}, "NUL"),
        ({"command": "ls", "timeout": 0}, "arguments.timeout must be at least 1"),
        ({"command": "ls", "timeout": 1e9}, "arguments.timeout must be at most 86400"),
        ({"command": "ls", "timeout": "5"}, "arguments.timeout must be a number"),
        ({"command": "ls", "timeout": True}, "arguments.timeout must be a number"),
        ('{"command": "ls", "timeout": NaN}', "timeout must be a number of seconds"),
        ({"command": "ls", "background": "yes"}, "arguments.background must be a boolean"),
        ({"command": "ls", "cwd": "../.."}, "outside the workspace"),
        ({"command": "ls", "cwd": "/etc"}, "outside the workspace"),
        ({"command": "ls", "cwd": "missing"}, "is not a folder"),
        ({"command": "ls", "shell": "zsh"}, "arguments.shell is not a known argument"),
        ('{"command": "ls"', "not valid JSON"),
    ],
)
async def test_bad_arguments_get_an_error_a_model_can_read_and_start_nothing(
    shared_jobs: ShellJobs, workspace: Path, args: object, says: str
) -> None:
    raw = args if isinstance(args, str) else json.dumps(args)
    tool = ShellTool(shared_jobs)
    result = await asyncio.wait_for(run_tool(tool, raw, call(workspace)), DEADLINE)
    assert result.error
    assert says in result.output
    assert await shared_jobs.list_jobs() == []


async def test_ids_that_cannot_form_a_job_key_are_refused_before_the_host_is_asked(
    jobs: ShellJobs, workspace: Path
) -> None:
    ctx = call(workspace, call_id="call:with:colons")
    result = await shell(jobs, ctx, command="true")
    assert result.error
    assert "`key` must be 'job:<session id>:<call id>'" in result.output
    assert await jobs.list_jobs() == []
