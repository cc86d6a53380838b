"""Starting and stopping the PTY host daemon: `ensure_host` and `stop_host` for the service,
`shutdown_pty_host` for the app when it quits.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import time
from collections.abc import Sequence

from desktop.config import Settings, desk_command, without_desk_settings
from desktop.eventloop import EVENT_LOOP_ENV
from desktop.process.liveness import is_alive
from desktop.process.logfile import log_size, log_tail, open_log
from desktop.process.registration import HostRegistration
from desktop.ptyhost.client import PtyHostClient
from desktop.ptyhost.hostfiles import log_path, read_host_registration, write_host_settings
from desktop.ptyhost.protocol import PROTOCOL_VERSION, PtyHostError, PtyHostUnavailable

log = logging.getLogger("desk.ptyhost.launcher")

START_TIMEOUT = 15.0
STOP_TIMEOUT = 15.0  # a host of another version saving its terminals after SIGTERM


def other_version(settings: Settings) -> HostRegistration | None:
    """The registered host when it is alive and speaks another protocol version."""
    found = read_host_registration(settings)
    if found is None or found.protocol == PROTOCOL_VERSION or not is_alive(found.pid):
        return None
    return found


def version_mismatch(old: HostRegistration) -> PtyHostUnavailable:
    return PtyHostUnavailable(
        f"The PTY host still running (pid {old.pid}) speaks protocol version {old.protocol}, "
        f"and this Desk speaks version {PROTOCOL_VERSION}: it was left running by another "
        "Desk version, and no terminal can start until it exits. Its terminals keep running "
        "there. Run `desk service stop --all` to have it save its terminals and exit; the "
        "next terminal then starts a host of this version, which brings back the saved "
        "terminals it can read as new shells."
    )


async def ensure_host(
    settings: Settings,
    *,
    command: Sequence[str] | None = None,
    start_within: float = START_TIMEOUT,
) -> PtyHostClient:
    """A client of the running host, starting the daemon first when there is none."""
    client = await PtyHostClient.connect(settings)
    if client is not None:
        return client
    old = await asyncio.to_thread(other_version, settings)
    if old is not None:
        raise version_mismatch(old)
    process, log_offset = await start_daemon(settings, command)
    deadline = time.monotonic() + start_within
    while time.monotonic() < deadline:
        client = await PtyHostClient.connect(settings)
        if client is not None:
            client.process = process
            return client
        if process.returncode not in (None, 0):
            tail = await asyncio.to_thread(log_tail, log_path(settings), log_offset)
            raise PtyHostUnavailable(
                f"The PTY host exited with status {process.returncode}: {tail or '(no log)'}"
            )
        if process.returncode == 0:  # it yielded to a registered host: one we can use?
            old = await asyncio.to_thread(other_version, settings)
            if old is not None:
                raise version_mismatch(old)
        await asyncio.sleep(0.02)
    raise PtyHostUnavailable(f"The PTY host did not start within {start_within:.0f} s.")


def daemon_command(settings: Settings) -> list[str]:
    return desk_command(
        "pty-host",
        "--data-dir",
        str(settings.data_dir),
        "--runtime-dir",
        str(settings.runtime_dir),
    )


async def start_daemon(
    settings: Settings, command: Sequence[str] | None = None
) -> tuple[asyncio.subprocess.Process, int]:
    """Start `desk pty-host` detached; returns it and where its lines start in the log."""
    argv = list(command) if command is not None else daemon_command(settings)
    # The host and every program it starts never see Desk's settings or secrets (the
    # provider key, where the token is): it reads its settings from a 0600 file instead.
    env = without_desk_settings(os.environ)
    settings.ensure_dirs()
    await asyncio.to_thread(write_host_settings, settings, os.environ.get(EVENT_LOOP_ENV))
    log_file = await asyncio.to_thread(open_log, log_path(settings))
    try:
        offset = log_size(log_file)
        log.info("starting the PTY host")
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=log_file,
            env=env,
            cwd="/",
            start_new_session=True,
        )
    finally:
        os.close(log_file)
    return process, offset


async def stop_host(settings: Settings, *, save: bool = True) -> dict[str, object]:
    """Ask the running PTY host (if any) to save its terminals (or not) and exit.

    Returns {"stopped": bool, "saved": n}; waits until the host process is gone."""
    client = await PtyHostClient.connect(settings)
    if client is None:
        old = await asyncio.to_thread(other_version, settings)
        return {"stopped": False, "saved": 0} if old is None else await _stop_other(old, save)
    try:
        result = await client.shutdown(save=save)
    except PtyHostError as exc:
        await client.close()
        return {"stopped": False, "saved": 0, "error": exc.message}
    return {"stopped": True, "saved": result.get("saved", 0)}


async def _stop_other(old: HostRegistration, save: bool) -> dict[str, object]:
    """A host of another protocol version cannot be asked over the wire: SIGTERM is its
    save-and-exit (SIGKILL when the terminals are not to be saved)."""
    try:
        os.kill(old.pid, signal.SIGTERM if save else signal.SIGKILL)
    except ProcessLookupError:
        return {"stopped": True, "saved": None, "protocol": old.protocol}
    deadline = time.monotonic() + STOP_TIMEOUT
    while await asyncio.to_thread(is_alive, old.pid):
        if time.monotonic() > deadline:
            return {
                "stopped": False,
                "saved": 0,
                "error": f"the PTY host of protocol version {old.protocol} (pid {old.pid}) "
                f"did not exit within {STOP_TIMEOUT:.0f} s of SIGTERM",
            }
        await asyncio.sleep(0.05)
    return {"stopped": True, "saved": None, "protocol": old.protocol}


def shutdown_pty_host(settings: Settings, *, save: bool = True) -> dict[str, object]:
    """Blocking `stop_host`, for code without an event loop (`desk service stop --all`,
    the window's quit). Do not call it from a running event loop's thread."""
    return asyncio.run(stop_host(settings, save=save))
