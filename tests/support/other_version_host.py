"""A real PTY host daemon speaking another protocol version (its constant patched before the
daemon's modules import it), as an earlier Desk leaves one running after an upgrade."""

from __future__ import annotations

import os
import subprocess
import sys

from desktop.config import Settings, without_desk_settings
from desktop.ptyhost.hostfiles import read_host_registration, write_host_settings
from desktop.ptyhost.launcher import daemon_command
from desktop.ptyhost.protocol import PROTOCOL_VERSION
from tests.support.wait import wait_until

OLD = PROTOCOL_VERSION - 1
OLD_HOST = (
    "import sys\n"
    "import desktop.ptyhost.protocol as protocol\n"
    f"protocol.PROTOCOL_VERSION = {OLD}\n"
    "from desktop.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def start_old_host(settings: Settings) -> int:
    """The pid of a registered, live host speaking protocol OLD (detached, as the launcher
    starts one, and no child of the test: nothing here waits for it)."""
    settings.ensure_dirs()
    write_host_settings(settings, None)
    argv = [sys.executable, "-c", OLD_HOST, *daemon_command(settings)[3:]]
    detach = 'setsid "$@" </dev/null >/dev/null 2>&1 &'
    env = without_desk_settings(os.environ)
    subprocess.run(["sh", "-c", detach, "sh", *argv], check=True, env=env, cwd="/")

    def registered() -> bool:
        found = read_host_registration(settings)
        return found is not None and found.protocol == OLD

    wait_until(registered, timeout=15)
    found = read_host_registration(settings)
    assert found is not None
    return found.pid
