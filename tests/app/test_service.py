"""`desk service start|status|restart|stop` through the real CLI, with real processes."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess

from desktop.app.process import desk_serve_pids, is_desk_serve
from desktop.process.liveness import is_alive, wait_for_exit
from tests.support.desk import Desk, create_terminal, desk_argv, health
from tests.support.wait import wait_until


def mode(path: os.PathLike[str]) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def serve_pids(desk: Desk) -> list[int]:
    return desk_serve_pids(desk.data_dir, desk.runtime_dir)


def test_start_status_stop_run_a_private_service_and_never_print_the_token(desk: Desk) -> None:
    started = desk.json("service", "start")
    pid = started["pid"]
    assert isinstance(pid, int)
    assert started["already_running"] is False
    assert "token" not in started, "the CLI must never print the token"
    assert is_desk_serve(pid, desk.data_dir)

    registration = desk.registration()
    assert registration["pid"] == pid
    assert registration["url"] == started["url"]
    token = registration["token"]
    assert isinstance(token, str)
    assert token
    assert token == (desk.data_dir / "auth-token").read_text().strip()
    assert health(str(registration["url"]), token)["status"] == "ok"

    assert mode(desk.data_dir) == 0o700
    assert mode(desk.runtime_dir) == 0o700
    assert mode(desk.registration_path) == 0o600
    assert mode(desk.data_dir / "service.log") == 0o600
    assert token not in (desk.data_dir / "service.log").read_text()

    status = desk.json("service", "status")
    assert status["running"] is True
    assert status["pid"] == pid
    assert status["healthy"] is True
    assert status["stale_cleaned"] is False
    assert "token" not in status

    stopped = desk.json("service", "stop")
    assert stopped["stopped"] is True
    assert stopped["pid"] == pid
    assert not is_alive(pid)
    assert not desk.registration_path.exists()
    assert desk.json("service", "status")["running"] is False


def test_second_start_says_already_running(desk: Desk) -> None:
    first = desk.json("service", "start")
    again = desk.run("service", "start")
    assert again.returncode == 0
    assert "already running" in again.stdout
    assert str(first["pid"]) in again.stdout
    assert serve_pids(desk) == [first["pid"]]


def test_concurrent_starts_make_one_service(desk: Desk) -> None:
    starters = [
        subprocess.Popen(
            [*desk_argv(), "service", "start"],
            env=desk.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outputs = [starter.communicate(timeout=60) for starter in starters]
    assert [starter.returncode for starter in starters] == [0, 0, 0], outputs
    assert sum("already running" in out for out, _ in outputs) == 2
    pids = serve_pids(desk)
    assert len(pids) == 1
    assert all(str(pids[0]) in out for out, _ in outputs)


def test_restart_gives_a_new_pid_on_the_same_data(desk: Desk) -> None:
    first = desk.json("service", "start")
    old_pid = first["pid"]
    assert isinstance(old_pid, int)
    old_token = desk.registration()["token"]
    database = desk.data_dir / "desk.sqlite3"
    assert database.exists()

    restarted = desk.json("service", "restart")
    new_pid = restarted["pid"]
    assert isinstance(new_pid, int)
    assert new_pid != old_pid
    assert restarted["previous_pid"] == old_pid
    assert not is_alive(old_pid)
    assert is_desk_serve(new_pid, desk.data_dir)
    registration = desk.registration()
    assert registration["token"] == old_token
    assert database.exists()
    # The successor keeps the port, so the UI's origin (and its offline cache) stays the same.
    assert registration["url"] == first["url"]
    assert health(str(registration["url"]), str(old_token))["pid"] == new_pid
    assert serve_pids(desk) == [new_pid]


def test_killed_service_is_reported_dead_and_start_recovers(desk: Desk) -> None:
    pid = desk.json("service", "start")["pid"]
    assert isinstance(pid, int)
    os.kill(pid, signal.SIGKILL)
    assert wait_for_exit(pid, 10.0)

    status = desk.json("service", "status")
    assert status["running"] is False
    assert status["stale_cleaned"] is True
    assert status["stale_pid"] == pid
    assert not desk.registration_path.exists()

    recovered = desk.json("service", "start")
    assert recovered["already_running"] is False
    assert recovered["pid"] != pid
    assert health(str(recovered["url"]), str(desk.registration()["token"]))["status"] == "ok"


def test_registration_naming_another_program_is_stale(desk: Desk) -> None:
    desk.json("service", "start")
    desk.json("service", "stop")
    # A reused pid: alive, but not a desk serve for this data dir.
    bogus = {"pid": os.getpid(), "url": "http://127.0.0.1:9", "token": "x", "started": 1.0}
    desk.registration_path.write_text(json.dumps(bogus))
    status = desk.json("service", "status")
    assert status["running"] is False
    assert status["stale_cleaned"] is True
    assert is_alive(os.getpid())


CORRUPT = [
    b"{not json",
    b'["a", "list"]',
    b'{"pid": "12", "url": "http://127.0.0.1:1", "token": "t", "started": 1}',
    b'{"pid": 12, "url": "file:///etc/passwd", "token": "t", "started": 1}',
    b'{"pid": 12, "url": "http://127.0.0.1:1", "token": "", "started": 1}',
    b"\xff\xfe not utf-8",
]


def test_corrupt_registration_is_removed_with_a_warning(desk: Desk) -> None:
    desk.runtime_dir.mkdir(mode=0o700, parents=True)
    for content in CORRUPT:
        desk.registration_path.write_bytes(content)
        done = desk.run("service", "status", "--json")
        assert done.returncode == 0, done.stderr
        assert "warning" in done.stderr.lower()
        assert "corrupt" in done.stderr
        status = json.loads(done.stdout)
        assert status["running"] is False
        assert status["corrupt_cleaned"] is True
        assert not desk.registration_path.exists()

    desk.registration_path.write_text("{not json")
    done = desk.run("service", "start", "--json")
    assert done.returncode == 0
    assert "corrupt" in done.stderr
    assert desk.registration()["pid"] == json.loads(done.stdout)["pid"]


def test_corrupt_registration_of_a_running_service_is_replaced(desk: Desk) -> None:
    old_pid = desk.json("service", "start")["pid"]
    desk.registration_path.write_text("garbage")
    done = desk.run("service", "start", "--json")
    assert done.returncode == 0, done.stderr
    assert "corrupt" in done.stderr
    assert f"unregistered service pid {old_pid}" in done.stderr
    new_pid = json.loads(done.stdout)["pid"]
    assert isinstance(old_pid, int)
    assert not is_alive(old_pid), "two services on one database"
    assert serve_pids(desk) == [new_pid]


def test_stop_when_nothing_runs(desk: Desk) -> None:
    stopped = desk.json("service", "stop")
    assert stopped["stopped"] is False
    assert stopped["pid"] is None


def test_taken_port_falls_back_to_a_free_one(desk: Desk) -> None:
    first = desk.json("service", "start")
    desk.json("service", "stop")
    port = int(str(first["url"]).rsplit(":", 1)[1])
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", port))
        squatter.listen()
        second = desk.json("service", "start")
    assert second["url"] != first["url"]
    assert health(str(second["url"]), str(desk.registration()["token"]))["status"] == "ok"


def test_stop_all_also_stops_the_pty_host(desk: Desk) -> None:
    desk.json("service", "start")
    registration = desk.registration()
    create_terminal(str(registration["url"]), str(registration["token"]))
    host = json.loads((desk.runtime_dir / "pty-host.json").read_text())
    host_pid = host["pid"]
    assert is_alive(host_pid)

    # A plain stop leaves the PTY host (and its terminals) for the next service.
    desk.json("service", "stop")
    assert is_alive(host_pid)

    stopped = desk.json("service", "stop", "--all")
    assert stopped["pid"] is None
    assert "error" not in json.dumps(stopped.get("pty_host")), stopped
    assert wait_for_exit(host_pid, 15.0)
    wait_until(lambda: not desk.leftovers(), timeout=10)
