"""`desk serve`: run the service in the foreground until SIGTERM/SIGINT."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
import time

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger

from desktop import eventloop
from desktop.config import Settings
from desktop.process.datadir import DataDirClaim, DataDirInUse
from desktop.process.registration import ServiceRegistration
from desktop.server.app import create_app
from desktop.server.appkeys import INFLIGHT
from desktop.server.auth import load_or_create_token
from desktop.store.migrations import SchemaTooNew

log = logging.getLogger("desk.server")
# SIGTERM must end the process within 5 s: drain requests, then close what is left.
DRAIN_SECONDS = 2.5
SHUTDOWN_TIMEOUT = 1.5


class AccessLogger(AbstractAccessLogger):
    """Logs method, path and status, never the query string (it may carry the token)."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        self.logger.debug(
            "%s %s %s %.1fms", request.method, request.path, response.status, time * 1000
        )

    @property
    def enabled(self) -> bool:
        # Per-request lines only with `desk -v`: they cost throughput and fill service.log.
        return self.logger.isEnabledFor(logging.DEBUG)


async def serve(settings: Settings, host: str, port: int) -> int:
    settings.ensure_dirs()
    claim = DataDirClaim(settings.data_dir)
    try:
        claim.take()  # before the database opens: one writer per data dir
    except DataDirInUse as exc:
        print(f"desk serve: {exc}", file=sys.stderr)
        return 4
    try:
        return await _serve_claimed(settings, host, port, claim)
    finally:
        claim.release()


async def _serve_claimed(settings: Settings, host: str, port: int, claim: DataDirClaim) -> int:
    token = await asyncio.to_thread(load_or_create_token, settings.token_path)
    app = create_app(settings, token=token)
    runner = web.AppRunner(
        app,
        access_log_class=AccessLogger,
        access_log=logging.getLogger("desk.access"),
        shutdown_timeout=SHUTDOWN_TIMEOUT,
        handle_signals=False,
    )
    try:
        await runner.setup()
    except SchemaTooNew as exc:
        print(f"desk serve: {exc}", file=sys.stderr)
        return 3
    site = web.TCPSite(runner, host, port, reuse_address=True)
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        print(f"desk serve: cannot listen on {host}:{port}: {exc.strerror}", file=sys.stderr)
        return 2
    bound_port = _bound_port(runner, port)
    url_host = f"[{host}]" if ":" in host else host
    ready = {"url": f"http://{url_host}:{bound_port}", "token": token, "pid": os.getpid()}
    # Before the ready line: a SIGTERM sent the moment it is read must drain, not kill.
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    claim.publish(ServiceRegistration(os.getpid(), str(ready["url"]), token, time.time()))
    sys.stdout.write(json.dumps(ready) + "\n")
    sys.stdout.flush()
    log.info("serving on http://%s:%s (pid %s)", url_host, bound_port, os.getpid())
    try:
        await stop.wait()
    finally:
        log.info("stopping")
        await site.stop()
        if not await app[INFLIGHT].wait_idle(DRAIN_SECONDS):
            log.warning("%d requests still running at shutdown", app[INFLIGHT].count)
        await runner.cleanup()
    return 0


def _bound_port(runner: web.AppRunner, requested: int) -> int:
    for address in runner.addresses:
        if isinstance(address, tuple) and len(address) >= 2:
            return int(address[1])
    return requested


def run_serve(settings: Settings, host: str, port: int) -> int:
    return eventloop.run(serve(settings, host, port))
