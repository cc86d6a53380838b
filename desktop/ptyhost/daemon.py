"""`desk pty-host`: serving. Take the host lock, revive saved terminals, listen on the control
and handoff sockets, register, run until asked to stop, then save (or not) and clean up."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import time
from pathlib import Path

from desktop import eventloop
from desktop.config import Settings
from desktop.process.lock import FileLock
from desktop.process.registration import (
    HostRegistration,
    remove_registration,
    write_registration,
)
from desktop.ptyhost.connection import HostConnection
from desktop.ptyhost.handoff_listener import HandoffListener
from desktop.ptyhost.host import PtyHost
from desktop.ptyhost.hostfiles import (
    HANDOFF_SOCKET_NAME,
    lock_path,
    read_host_registration,
    read_host_settings,
    socket_path,
    usable,
)
from desktop.ptyhost.jobs import Jobs
from desktop.ptyhost.operations import Operations
from desktop.ptyhost.protocol import PROTOCOL_VERSION

log = logging.getLogger("desk.ptyhost")

LOCK_WAIT_SECONDS = 10.0


async def serve(settings: Settings) -> int:
    settings.ensure_dirs()
    lock = FileLock(lock_path(settings))
    if not await _acquire(lock, settings):
        log.info("another PTY host already runs for %s", settings.runtime_dir)
        return 0
    host = PtyHost(settings)
    jobs = Jobs(host)
    operations = Operations(host, jobs)
    loop = host.loop
    server: asyncio.AbstractServer | None = None
    handoff: HandoffListener | None = None
    path: Path | None = None
    try:
        path = await asyncio.to_thread(socket_path, settings)
        await asyncio.to_thread(path.unlink, missing_ok=True)
        await host.revive_terminals()
        server = await loop.create_unix_server(
            lambda: HostConnection(host, operations), path=str(path)
        )
        await asyncio.to_thread(os.chmod, path, 0o600)
        handoff = HandoffListener(path.with_name(HANDOFF_SOCKET_NAME), host)
        handoff.start()
        await asyncio.to_thread(
            write_registration, settings.pty_host_registration_path, _registration(host, path)
        )
        log.info("PTY host %s listening (pid %d)", host.epoch, host.pid)
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, host.stop_and_save)
        loop.add_signal_handler(signal.SIGHUP, lambda: None)
        host.start()
        save = await host.stopping
        await asyncio.to_thread(
            remove_registration,
            settings.pty_host_registration_path,
            HostRegistration,
            pid=host.pid,
        )
        server.close()
        await host.autosaver.stop()
        if save:
            await host.save_terminals()
        # A clean exit (saved or discarded on purpose): nothing to recover from.
        await host.autosaver.clear()
    finally:
        if server is not None:
            server.close()
        if handoff is not None:
            handoff.close()
        # Jobs end with the host (they are not saved): closed job tabs still own a process.
        jobs.close()
        await host.close(jobs.terminals())
        if path is not None:
            await asyncio.to_thread(path.unlink, missing_ok=True)
        await asyncio.to_thread(lock.release)
    return 0


def _registration(host: PtyHost, path: Path) -> HostRegistration:
    return HostRegistration(
        pid=host.pid,
        protocol=PROTOCOL_VERSION,
        socket=str(path),
        secret=host.secret,
        epoch=host.epoch,
    )


async def _acquire(lock: FileLock, settings: Settings) -> bool:
    """Take the host lock. A host that is still saving and exiting holds it briefly: wait
    for it, unless another live host is registered and serving (then it wins)."""
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        if await asyncio.to_thread(lock.try_acquire):
            return True
        registration = await asyncio.to_thread(read_host_registration, settings)
        if usable(registration) or time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)


def run(settings: Settings) -> int:
    """Entry point of `desk pty-host`."""
    # Screen-model parsing runs in threads: switch often so the output loop stays responsive.
    sys.setswitchinterval(0.001)
    # The host's own files are created 0600 in 0700 directories; its umask stays the user's,
    # which every terminal and agent command inherits.
    settings, loop_kind = read_host_settings(settings)
    started = time.monotonic()
    try:
        return eventloop.run(serve(settings), loop_kind)
    finally:
        log.info("PTY host exited after %.0f s", time.monotonic() - started)
