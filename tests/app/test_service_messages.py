"""`desk service ...` speaks sentences to people and JSON to scripts (issue 12, item 10), and
says what it did not stop and why: a `desk serve` started by hand is left alone, and so is
the PTY host it uses (stopping it would only make that service start a new one at once)."""

from __future__ import annotations

import json
import os
import signal
import subprocess

from desktop.process.liveness import is_alive, wait_for_exit
from tests.support.desk import Desk, api_call, create_terminal
from tests.support.other_version_host import OLD, start_old_host
from tests.support.wait import wait_until


def host_pid(desk: Desk) -> int:
    pid = json.loads((desk.runtime_dir / "pty-host.json").read_text())["pid"]
    assert isinstance(pid, int)
    return pid


def test_service_commands_print_sentences_unless_json_is_asked(desk: Desk) -> None:
    started = desk.run("service", "start")
    assert started.returncode == 0, started.stderr
    assert started.stdout.startswith("Started the Desk service (pid ")
    assert "{" not in started.stdout
    assert "token=<the token in" in started.stdout
    pid = desk.registration()["pid"]

    status = desk.run("service", "status")
    assert status.stdout.startswith(f"The Desk service is running (pid {pid}, up ")
    assert "it answers health checks." in status.stdout
    as_json = desk.json("service", "status")
    assert as_json["running"] is True
    assert as_json["pid"] == pid

    stopped = desk.run("service", "stop")
    assert stopped.returncode == 0
    assert stopped.stdout.splitlines()[0] == f"Stopped the Desk service (pid {pid})."
    assert not is_alive(int(str(pid)))
    again = desk.run("service", "stop")
    assert again.stdout.startswith("No background Desk service was running for ")
    assert desk.run("service", "status").stdout.startswith("No background Desk service is running")


def test_stop_all_leaves_a_foreground_serve_and_its_pty_host_and_says_why(
    desk: Desk, serve_by_hand: tuple[subprocess.Popen[str], dict[str, object]]
) -> None:
    process, ready = serve_by_hand
    url, token = str(ready["url"]), str(ready["token"])
    kept = create_terminal(url, token)
    host = host_pid(desk)

    done = desk.run("service", "stop", "--all")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[0].startswith("No background Desk service was running for ")
    assert f"A `desk serve` started by hand (pid {process.pid})" in done.stdout
    assert "it was left alone" in done.stdout
    assert f"Did not stop the PTY host: the `desk serve` pid {process.pid} uses it" in done.stdout
    # Nothing was stopped: the same service and the same PTY host, terminals intact.
    assert process.poll() is None
    assert is_alive(host)
    assert host_pid(desk) == host
    still = api_call(url, token, "GET", f"/api/pty/{kept['id']}")
    assert isinstance(still, dict)
    assert still["status"] == "running"

    as_json = desk.run("service", "stop", "--all", "--json")
    assert as_json.returncode == 1
    result = json.loads(as_json.stdout)
    assert result["stopped"] is False
    assert result["unmanaged"] == [process.pid]
    assert result["pty_host"] == {"stopped": False, "saved": 0, "in_use_by": [process.pid]}
    status = desk.run("service", "status")
    assert f"A `desk serve` started by hand (pid {process.pid})" in status.stdout

    # Once that service is gone, stop --all saves the terminal and ends the PTY host.
    process.send_signal(signal.SIGTERM)
    process.wait(15)
    finished = desk.run("service", "stop", "--all")
    assert finished.returncode == 0, finished.stdout
    assert "Saved 1 terminal and stopped the PTY host" in finished.stdout
    assert wait_for_exit(host, 15.0)
    wait_until(lambda: not os.path.exists(desk.runtime_dir / "pty-host.json"), timeout=10)


def test_stop_all_stops_a_pty_host_of_another_protocol_version_and_says_so(desk: Desk) -> None:
    old = start_old_host(desk.settings)
    try:
        finished = desk.run("service", "stop", "--all")
        assert finished.returncode == 0, finished.stderr
        assert f"Stopped the PTY host of protocol version {OLD}" in finished.stdout
        assert wait_for_exit(old, 15.0)
    finally:
        if is_alive(old):
            os.kill(old, signal.SIGKILL)
