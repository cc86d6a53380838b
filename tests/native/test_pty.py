"""desktop.native against real PTYs and real processes, for both backends."""

from __future__ import annotations

import contextlib
import gc
import os
import select
import signal
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import pytest

import desktop.native as native
from desktop.native import ExitStatus, PtyProcess, spawn
from tests.support.wait import wait_until

BACKENDS = ["native", "ptyprocess"]
TIMEOUT = 10.0
T = TypeVar("T")

Spawner = Callable[..., PtyProcess]


# ---------------------------------------------------------------- helpers


def base_env(home: Path) -> dict[str, str]:
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "TERM": "dumb",
        "PS1": "$ ",
        "LC_ALL": "C.UTF-8",
    }


def wait_readable(fd: int, deadline: float) -> bool:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return False
    ready, _, _ = select.select([fd], [], [], remaining)
    return bool(ready)


def read_until(proc: PtyProcess, needle: bytes, timeout: float = TIMEOUT) -> bytes:
    """Output read so far once it contains needle; fails on EOF or timeout without it."""
    deadline = time.monotonic() + timeout
    output = b""
    while needle not in output:
        if not wait_readable(proc.fd, deadline):
            raise AssertionError(f"{needle!r} not seen within {timeout}s; got {output!r}")
        try:
            output += proc.read()
        except EOFError:
            raise AssertionError(f"EOF before {needle!r}; got {output!r}") from None
    return output


def read_to_eof(proc: PtyProcess, timeout: float = TIMEOUT) -> bytes:
    deadline = time.monotonic() + timeout
    output = b""
    while True:
        if not wait_readable(proc.fd, deadline):
            raise AssertionError(f"no EOF within {timeout}s; got {output!r}")
        try:
            output += proc.read()
        except EOFError:
            return output


def drain_until(
    condition: Callable[[], T | None], proc: PtyProcess, what: str, timeout: float = TIMEOUT
) -> T:
    """Poll condition while draining proc's output (select doubles as the wait)."""

    def met() -> T | None:
        value = condition()
        if value is None and wait_readable(proc.fd, time.monotonic() + 0.02):
            with contextlib.suppress(EOFError):
                proc.read()
        return value

    return wait_until(met, timeout, interval=0, what=what)  # type: ignore[no-any-return]


def wait_exit(proc: PtyProcess, timeout: float = TIMEOUT) -> ExitStatus:
    """The child's status, waiting on a pidfd (readable once it has exited)."""
    status = proc.poll_exit()
    if status is not None:
        return status
    pidfd = os.pidfd_open(proc.pid)
    try:
        ready, _, _ = select.select([pidfd], [], [], timeout)
    finally:
        os.close(pidfd)
    assert ready, f"pid {proc.pid} still running after {timeout}s"
    status = proc.poll_exit()
    assert status is not None
    return status


def child_states() -> dict[int, str]:
    """pid -> state letter of every process whose parent is this test process."""
    me = os.getpid()
    children: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as stat:
                text = stat.read()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2 :].split()  # comm may hold spaces or parens
        if int(fields[1]) == me:
            children[int(entry)] = fields[0]
    return children


def open_fd_count() -> int:
    # Collect first: an earlier test's unreferenced file object closing its fd mid-test
    # would otherwise look like a change made by the code under test.
    gc.collect()
    return len(os.listdir("/proc/self/fd"))


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    value: str = request.param
    return value


@pytest.fixture
def start(backend: str, tmp_path: Path) -> Iterator[Spawner]:
    """spawn() bound to the backend; every child is killed and reaped at teardown."""
    started: list[PtyProcess] = []

    def _start(
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        cols: int = 80,
        rows: int = 24,
    ) -> PtyProcess:
        proc = spawn(
            argv,
            env=base_env(tmp_path) if env is None else env,
            cwd=str(tmp_path) if cwd is None else cwd,
            cols=cols,
            rows=rows,
            backend=backend,
        )
        started.append(proc)
        return proc

    yield _start
    for proc in started:
        proc.signal_group(signal.SIGKILL)
        wait_exit(proc)
        proc.close()


def interactive_shell(start: Spawner) -> PtyProcess:
    shell = start(["sh"])
    read_until(shell, b"$ ")
    return shell


# ---------------------------------------------------------------- backend


def test_native_extension_is_built_and_default() -> None:
    assert native.BACKEND == "native"
    from desktop.native.native_backend import NativePtyProcess

    proc = spawn(["true"], env={"PATH": "/usr/bin:/bin"}, cwd="/", cols=80, rows=24)
    try:
        assert isinstance(proc, NativePtyProcess)
        read_to_eof(proc)
        assert wait_exit(proc) == ExitStatus(code=0, signal=None)
    finally:
        proc.close()


def test_unknown_backend_is_rejected(tmp_path: Path) -> None:
    children = child_states()
    with pytest.raises(ValueError, match="backend"):
        spawn(["true"], env={}, cwd=str(tmp_path), cols=80, rows=24, backend="tmux")
    assert child_states() == children


# ---------------------------------------------------------------- output and input


def test_command_output_then_eof(start: Spawner) -> None:
    proc = start(["/bin/sh", "-c", "echo hello"])
    assert read_to_eof(proc) == b"hello\r\n"
    with pytest.raises(EOFError):
        proc.read()
    with pytest.raises(EOFError):
        proc.read_into(bytearray(16))
    assert wait_exit(proc) == ExitStatus(code=0, signal=None)


def test_interactive_shell_runs_what_is_written(start: Spawner) -> None:
    shell = interactive_shell(start)
    assert shell.write(b"echo $((6*7))\n") == len(b"echo $((6*7))\n")
    read_until(shell, b"\r\n42\r\n")
    shell.write(memoryview(b"exit 0\n"))
    read_to_eof(shell)
    assert wait_exit(shell).exit_code == 0


def test_nothing_available_reads_empty(start: Spawner) -> None:
    shell = interactive_shell(start)  # prompt consumed; the shell now waits for input
    assert shell.read() == b""
    assert shell.read_into(bytearray(4096)) == 0


def test_read_into_fills_caller_buffer(start: Spawner) -> None:
    proc = start(["sh", "-c", "printf abcdefghij"])
    buffer = bytearray(64)
    view = memoryview(buffer)
    received = 0
    deadline = time.monotonic() + TIMEOUT

    def read_until_eof() -> None:
        nonlocal received
        while True:
            assert wait_readable(proc.fd, deadline)
            received += proc.read_into(view[received:])

    with pytest.raises(EOFError):
        read_until_eof()
    assert bytes(buffer[:received]) == b"abcdefghij"


def test_utf8_output_intact_across_small_reads(start: Spawner, tmp_path: Path) -> None:
    text = "héllo wörld € 😀 中文 — " * 3000
    (tmp_path / "utf8.txt").write_text(text, encoding="utf-8")
    expected = text.encode("utf-8")
    proc = start(["cat", "utf8.txt"])
    chunks: list[bytes] = []
    small = bytearray(7)  # odd size: splits multi-byte characters between reads
    deadline = time.monotonic() + TIMEOUT
    try:
        while True:
            assert wait_readable(proc.fd, deadline)
            if len(chunks) % 2:
                chunks.append(proc.read(5))
            else:
                count = proc.read_into(small)
                chunks.append(bytes(small[:count]))
    except EOFError:
        pass
    assert b"".join(chunks).decode("utf-8") == text
    assert len(b"".join(chunks)) == len(expected)

    def decodes(chunk: bytes) -> bool:
        try:
            chunk.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True

    assert not all(decodes(chunk) for chunk in chunks if chunk)  # reads did split characters


def test_write_reports_zero_when_input_queue_is_full(start: Spawner) -> None:
    proc = start(["sleep", "30"])  # never reads its input
    accepted = [proc.write(b"x" * 1024) for _ in range(1000)]
    assert accepted[0] > 0
    assert 0 in accepted


# ---------------------------------------------------------------- terminal state


def test_master_fd_and_session(start: Spawner) -> None:
    proc = start(["sleep", "30"])
    assert not os.get_blocking(proc.fd)
    assert not os.get_inheritable(proc.fd)
    assert os.getpgid(proc.pid) == proc.pid
    assert os.getsid(proc.pid) == proc.pid
    assert proc.foreground_pgid() == proc.pid
    assert proc.foreground_process() == "sleep"


def test_resize_is_seen_by_stty_and_signals_winch(start: Spawner) -> None:
    proc = start(
        ["sh", "-c", 'trap "echo got-winch" WINCH; stty size; read line; stty size'],
        cols=80,
        rows=24,
    )
    read_until(proc, b"24 80\r\n")
    proc.resize(132, 43)
    proc.write(b"\n")
    output = read_to_eof(proc)
    assert b"43 132\r\n" in output
    assert b"got-winch" in output


@pytest.mark.parametrize(("cols", "rows"), [(0, 24), (80, 0), (1001, 24), (80, 1001), (-1, 5)])
def test_resize_rejects_bad_sizes(start: Spawner, cols: int, rows: int) -> None:
    proc = start(["sh", "-c", "read line; stty size"], cols=90, rows=30)
    with pytest.raises(ValueError, match=r"(cols|rows) must be within 1\.\.1000"):
        proc.resize(cols, rows)
    proc.write(b"\n")
    assert b"30 90" in read_to_eof(proc)


def test_foreground_process_follows_jobs(start: Spawner) -> None:
    shell = interactive_shell(start)
    assert shell.foreground_process() == "sh"
    assert shell.foreground_pgid() == shell.pid
    shell.write(b"sleep 30\n")
    drain_until(lambda: shell.foreground_process() == "sleep" or None, shell, "sleep in front")
    sleep_group = shell.foreground_pgid()
    assert sleep_group is not None
    assert sleep_group != shell.pid
    shell.signal_foreground(signal.SIGINT)
    drain_until(lambda: shell.foreground_process() == "sh" or None, shell, "sh in front again")
    assert shell.foreground_pgid() == shell.pid
    assert shell.poll_exit() is None  # SIGINT went to the job, not the shell


# ---------------------------------------------------------------- exit status


def test_an_exit_code_is_reported_cached_and_the_child_reaped(start: Spawner) -> None:
    proc = start(["sh", "-c", "exit 3"])
    read_to_eof(proc)
    status = wait_exit(proc)
    assert status == ExitStatus(code=3, signal=None)
    assert status.exit_code == 3
    assert proc.poll_exit() is status  # cached
    assert proc.pid not in child_states()  # reaped, not a zombie


def test_a_child_killed_by_a_signal_reports_the_signal_and_is_reaped(start: Spawner) -> None:
    proc = start(["sh", "-c", "kill -TERM $$"])
    read_to_eof(proc)
    status = wait_exit(proc)
    assert status == ExitStatus(code=None, signal=signal.SIGTERM)
    assert status.exit_code == 143
    assert proc.pid not in child_states()


def test_signal_group_reaches_the_session(start: Spawner) -> None:
    proc = start(["sh", "-c", "sleep 30 & wait"])
    assert proc.poll_exit() is None
    proc.signal_group(signal.SIGKILL)
    assert wait_exit(proc).signal == signal.SIGKILL
    proc.signal_group(signal.SIGKILL)  # reaped: a no-op, never a recycled pid


def test_close_is_idempotent_and_hangs_up(start: Spawner) -> None:
    proc = start(["sleep", "30"])
    proc.close()
    proc.close()
    assert proc.fd == -1
    with pytest.raises(OSError, match="Bad file descriptor"):
        proc.read()
    assert wait_exit(proc).signal == signal.SIGHUP  # the terminal went away


# ---------------------------------------------------------------- environment


def test_env_and_cwd_are_honoured(
    start: Spawner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DESK_PARENT_ONLY", "leak")
    workdir = tmp_path / "work dir"
    workdir.mkdir()
    env = {"PATH": "/usr/bin:/bin", "GREETING": "hi there ✓"}
    proc = start(["sh", "-c", 'echo "[$GREETING]"; pwd; env'], env=env, cwd=str(workdir))
    output = read_to_eof(proc).decode("utf-8")
    assert "[hi there ✓]\r\n" in output
    assert f"\r\n{workdir.resolve()}\r\n" in output
    assert "DESK_PARENT_ONLY" not in output


def test_program_is_looked_up_in_env_path(start: Spawner, tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    script = bindir / "desk-greeter"
    script.write_text('#!/bin/sh\necho "greeter $1"\n')
    script.chmod(0o755)
    env = {"PATH": f"/nonexistent:{bindir}:/usr/bin:/bin"}
    proc = start(["desk-greeter", "ok"], env=env)
    assert read_to_eof(proc) == b"greeter ok\r\n"


def test_child_starts_with_clean_signals_and_fds(
    start: Spawner, tmp_path: Path, backend: str
) -> None:
    inherited = os.open(tmp_path, os.O_RDONLY)  # a low number, below the spawn's own fds
    os.set_inheritable(inherited, True)
    high_fd = os.dup2(inherited, 250, inheritable=True)
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    try:
        proc = start(["sh", "-c", "ls /proc/$$/fd; grep -E '^Sig(Blk|Ign)' /proc/self/status"])
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        os.close(high_fd)
        os.close(inherited)
    output = read_to_eof(proc).decode()
    fds = output.split()[: output.split().index("SigBlk:")]
    assert "250" not in fds
    assert str(inherited) not in fds
    assert "SigBlk:\t0000000000000000" in output  # not the caller's mask
    ignored = int(output.split("SigIgn:\t", 1)[1].split()[0], 16)
    if backend == "native":
        assert ignored == 0  # not Python's SIGPIPE ignore, nor an inherited one
    else:
        # Python cannot touch glibc's internal signals 32 and 33: only the native spawn can.
        assert ignored & ~(0b11 << 31) == 0


# ---------------------------------------------------------------- spawn errors


@pytest.mark.parametrize(
    ("argv", "cwd", "search_tmp", "error"),
    [
        (["desk-no-such-command"], None, False, FileNotFoundError),
        (["/nonexistent/bin/tool"], None, False, FileNotFoundError),
        (["sh"], "missing-dir", False, FileNotFoundError),
        (["sh"], "a-file", False, NotADirectoryError),
        (["./not-executable"], None, False, PermissionError),
        (["not-executable"], None, True, PermissionError),  # found in PATH, not executable
        (["./no-shebang"], None, False, OSError),  # ENOEXEC: no shell fallback
    ],
)
def test_spawn_errors_raise_and_leave_nothing(
    backend: str,
    tmp_path: Path,
    argv: list[str],
    cwd: str | None,
    search_tmp: bool,
    error: type[OSError],
) -> None:
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "not-executable").write_text("echo no\n")
    (tmp_path / "no-shebang").write_bytes(b"\x00\x01binary")
    (tmp_path / "no-shebang").chmod(0o755)
    env = base_env(tmp_path)
    if search_tmp:
        env["PATH"] = f"{tmp_path}:{env['PATH']}"
    fds = open_fd_count()
    children = child_states()
    with pytest.raises(error):
        spawn(
            argv,
            env=env,
            cwd=str(tmp_path / cwd) if cwd else str(tmp_path),
            cols=80,
            rows=24,
            backend=backend,
        )
    assert child_states() == children
    assert open_fd_count() == fds


@pytest.mark.parametrize(
    ("argv", "env", "cols", "rows", "error"),
    [
        ([], {}, 80, 24, ValueError),
        (["true"], {}, 0, 24, ValueError),
        (["true"], {}, 80, 0, ValueError),
        (["true"], {}, 1001, 24, ValueError),
        (["true"], {}, 80, 1001, ValueError),
        (["true"], {"A=B": "c"}, 80, 24, ValueError),
        (["tr\0ue"], {}, 80, 24, ValueError),
        ("true", {}, 80, 24, TypeError),
        (["true"], {}, 80.0, 24, TypeError),
    ],
)
def test_bad_arguments_are_rejected(
    backend: str,
    tmp_path: Path,
    argv: list[str],
    env: dict[str, str],
    cols: int,
    rows: int,
    error: type[Exception],
) -> None:
    fds = open_fd_count()
    children = child_states()
    with pytest.raises(error):
        spawn(argv, env=env, cwd=str(tmp_path), cols=cols, rows=rows, backend=backend)
    assert child_states() == children
    assert open_fd_count() == fds


def test_sizes_at_the_limits_are_accepted(start: Spawner) -> None:
    proc = start(["stty", "size"], cols=1000, rows=1)
    assert read_to_eof(proc) == b"1 1000\r\n"


# ---------------------------------------------------------------- resource hygiene


def test_many_spawns_leak_no_fds_or_zombies(backend: str, tmp_path: Path) -> None:
    env = base_env(tmp_path)
    fds = open_fd_count()
    spawned: list[int] = []
    for index in range(200):
        proc = spawn(
            ["sh", "-c", f"exit {index % 7}"],
            env=env,
            cwd=str(tmp_path),
            cols=80,
            rows=24,
            backend=backend,
        )
        spawned.append(proc.pid)
        read_to_eof(proc)
        assert wait_exit(proc).code == index % 7
        proc.close()
    assert open_fd_count() == fds
    # Only our spawns: an earlier test's killed subprocess may still wait to be reaped.
    states = child_states()
    assert [pid for pid in spawned if states.get(pid) == "Z"] == []


def test_concurrent_spawns_from_threads_stay_separate(backend: str, tmp_path: Path) -> None:
    env = base_env(tmp_path)
    fds = open_fd_count()

    def run_one(_: int) -> tuple[int, bytes, ExitStatus]:
        proc = spawn(
            ["sh", "-c", "echo pid=$$"],
            env=env,
            cwd=str(tmp_path),
            cols=80,
            rows=24,
            backend=backend,
        )
        try:
            return proc.pid, read_to_eof(proc), wait_exit(proc)
        finally:
            proc.close()

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(run_one, range(40)))
    for pid, output, status in results:
        assert output == f"pid={pid}\r\n".encode()
        assert status == ExitStatus(code=0, signal=None)
    assert open_fd_count() == fds
    states = child_states()
    assert [pid for pid, _, _ in results if states.get(pid) == "Z"] == []
