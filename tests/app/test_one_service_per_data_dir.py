"""One service per data dir: a second `desk serve` on it refuses and names the first, and
`desk service start` (which the window uses) reuses a `desk serve` started by hand instead of
starting a second writer on the same database."""

from __future__ import annotations

import signal
import subprocess

from tests.support.desk import PROJECT, Desk, api_call, cleanup, desk_argv, make_desk


def test_a_second_serve_on_the_same_data_dir_refuses_and_names_the_first(
    desk: Desk, serve_by_hand: tuple[subprocess.Popen[str], dict[str, object]]
) -> None:
    first, ready = serve_by_hand
    other_runtime = make_desk(desk.data_dir.parent / "other")  # another runtime dir, same data
    env = {**other_runtime.env, "DESK_DATA_DIR": str(desk.data_dir)}
    try:
        second = subprocess.run(
            [*desk_argv(), "serve"],
            env=env,
            cwd=PROJECT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        cleanup(other_runtime)
    assert second.returncode == 4
    assert second.stdout == ""  # no ready line: nobody may take it for a service
    assert f"already used by another Desk service (pid {first.pid}, {ready['url']})" in (
        second.stderr
    )
    assert first.poll() is None
    assert api_call(str(ready["url"]), str(ready["token"]), "GET", "/api/health")


def test_service_start_reuses_a_serve_started_by_hand(
    desk: Desk, serve_by_hand: tuple[subprocess.Popen[str], dict[str, object]]
) -> None:
    first, ready = serve_by_hand
    started = desk.json("service", "start")
    assert started["pid"] == first.pid
    assert started["url"] == ready["url"]
    assert started["already_running"] is True
    assert started["managed"] is False
    assert not desk.registration_path.exists()  # nothing was registered as managed


def test_once_the_serve_by_hand_ends_its_record_goes_and_start_makes_a_managed_one(
    desk: Desk, serve_by_hand: tuple[subprocess.Popen[str], dict[str, object]]
) -> None:
    first, _ = serve_by_hand
    assert (desk.data_dir / "service-owner.json").exists()
    first.send_signal(signal.SIGTERM)
    first.wait(15)
    assert not (desk.data_dir / "service-owner.json").exists()
    started = desk.json("service", "start")
    assert started["pid"] != first.pid
    assert started["already_running"] is False
    assert desk.registration()["pid"] == started["pid"]
