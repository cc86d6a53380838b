"""Starting and stopping the PTY host daemon (the service's side; the shell's for quitting).

`ensure_host` connects to the registered host, or starts `desk pty-host` detached (its own
session: it outlives the service) and waits until it has registered. `stop_host` asks it to
save its terminals (or not) and exit, and waits until the process is gone.
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import time
from collections.abc import Sequence

from desktop.config import Settings, desk_command, without_desk_settings
from desktop.eventloop import EVENT_LOOP_ENV
from desktop.process.logfile import log_size, log_tail, open_log
from desktop.ptyhost.client import PtyHostClient
from desktop.ptyhost.hostfiles import log_path, write_host_settings
from desktop.ptyhost.protocol import PtyHostError, PtyHostUnavailable

log = logging.getLogger("desk.ptyhost.launcher")

START_TIMEOUT = 15.0


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
        return {"stopped": False, "saved": 0}
    try:
        result = await client.shutdown(save=save)
    except PtyHostError as exc:
        await client.close()
        return {"stopped": False, "saved": 0, "error": exc.message}
    return {"stopped": True, "saved": result.get("saved", 0)}


def shutdown_pty_host(settings: Settings, *, save: bool = True) -> dict[str, object]:
    """Blocking `stop_host`, for code without an event loop (`desk service stop --all`,
    the window's quit). Do not call it from a running event loop's thread."""
    return asyncio.run(stop_host(settings, save=save))
