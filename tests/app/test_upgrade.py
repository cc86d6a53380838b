"""After an upgrade the next start runs the new code: `ensure_service` (what `desk` does before
opening the window) replaces a managed service of another Desk version, and the successor
adopts the PTY host's terminals; a service of this version is reused as it is."""

from __future__ import annotations

import pytest

from desktop.app import service
from tests.support.desk import Desk, api_call, create_terminal


@pytest.mark.restart
def test_the_next_start_replaces_a_service_of_another_version_and_keeps_its_terminal(
    desk: Desk, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = desk.json("service", "start")  # never prints the token: read the registration
    terminal = create_terminal(str(first["url"]), str(desk.registration()["token"]))
    monkeypatch.setattr(service, "__version__", "99.0.0")  # a newer Desk is now installed

    info = service.ensure_service(desk.settings)

    assert info["pid"] != first["pid"]
    assert info["previous_pid"] == first["pid"]
    kept = api_call(str(info["url"]), str(info["token"]), "GET", f"/api/pty/{terminal['id']}")
    assert isinstance(kept, dict)
    assert kept["status"] == "running"
    assert (kept["pid"], kept["epoch"]) == (terminal["pid"], terminal["epoch"])


def test_the_next_start_reuses_a_service_of_this_version(desk: Desk) -> None:
    first = desk.json("service", "start")
    info = service.ensure_service(desk.settings)
    assert info["already_running"] is True
    assert info["pid"] == first["pid"]
