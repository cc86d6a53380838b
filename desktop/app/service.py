"""The managed background service behind `desk service start|stop|restart|status` and the window:
one detached `desk serve` per data dir, its registration and the lock every change takes.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import os
import select
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from desktop import __version__
from desktop.app.process import desk_serve_pids, is_desk_serve, serve_pids_for
from desktop.config import Settings, desk_command, write_private_file
from desktop.process.datadir import current_owner
from desktop.process.liveness import is_alive, terminate
from desktop.process.lock import FileLock
from desktop.process.logfile import log_size, log_tail, open_log
from desktop.process.registration import (
    CorruptRegistration,
    ServiceRegistration,
    read_registration,
    write_registration,
)
from desktop.ptyhost.hostfiles import read_host_registration, usable
from desktop.ptyhost.launcher import shutdown_pty_host
from desktop.values import strict_int

log = logging.getLogger("desk.shell.service")

START_TIMEOUT = 60.0
LOCK_TIMEOUT = 120.0
HEALTH_TIMEOUT = 3.0
_MAX_READY_LINE = 64 * 1024

# Services this process spawned: kept so they are reaped (and never warned about) here.
_children: dict[int, subprocess.Popen[bytes]] = {}


class ServiceError(RuntimeError):
    """The service could not be started, stopped or locked; the message says why."""


def log_path(settings: Settings) -> Path:
    return settings.data_dir / "service.log"


def _lock_path(settings: Settings) -> Path:
    return settings.runtime_dir / "service.lock"


def _port_path(settings: Settings) -> Path:
    return settings.data_dir / "service-port"


@contextlib.contextmanager
def _service_lock(settings: Settings, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    settings.ensure_dirs()
    lock = FileLock(_lock_path(settings))
    if not lock.acquire(timeout):
        raise ServiceError(f"another desk has held {lock.path} for over {timeout:.0f}s")
    try:
        yield
    finally:
        lock.release()


def _load_registration(path: Path) -> tuple[ServiceRegistration | None, bool]:
    """(registration or None, whether a corrupt file was removed).

    A corrupt file is removed with a warning, so the next start can replace it."""
    try:
        return read_registration(path, ServiceRegistration), False
    except CorruptRegistration as exc:
        log.warning("corrupt service registration %s removed (%s)", path, exc)
        path.unlink(missing_ok=True)
        return None, True


def _current(settings: Settings) -> tuple[ServiceRegistration | None, dict[str, object]]:
    """The live registration (or None) and what was cleaned on the way. Call under the lock."""
    path = settings.service_registration_path
    registration, corrupt = _load_registration(path)
    notes: dict[str, object] = {"stale_cleaned": False, "corrupt_cleaned": corrupt}
    if registration is not None and not is_desk_serve(registration.pid, settings.data_dir):
        # Dead, or the pid now belongs to another program.
        path.unlink(missing_ok=True)
        notes.update(stale_cleaned=True, stale_pid=registration.pid)
        registration = None
    return registration, notes


def _health(url: str, token: str, timeout: float = HEALTH_TIMEOUT) -> dict[str, object] | None:
    """The service's /api/health data, or None when it does not answer ok."""
    # No proxy: the service is on loopback and a proxy from the environment would only hurt.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    request = urllib.request.Request(
        f"{url}/api/health", headers={"Authorization": f"Bearer {token}"}
    )
    try:
        with opener.open(request, timeout=timeout) as response:
            body = json.loads(response.read())
    except (OSError, ValueError, http.client.HTTPException):
        return None
    data = body.get("data") if isinstance(body, dict) else None
    if isinstance(data, dict) and data.get("status") == "ok":
        return data
    return None


def service_status(settings: Settings) -> dict[str, object]:
    """Whether the service runs (stale and corrupt registrations are cleaned on the way)."""
    with _service_lock(settings):
        registration, notes = _current(settings)
    result: dict[str, object] = {
        "running": False,
        "pid": None,
        "url": None,
        "started": None,
        **notes,
        "registration": str(settings.service_registration_path),
        "log": str(log_path(settings)),
        "data_dir": str(settings.data_dir),
        "runtime_dir": str(settings.runtime_dir),
    }
    by_hand = [
        pid
        for pid in serve_pids_for(settings.data_dir, settings.runtime_dir)
        if registration is None or pid != registration.pid
    ]
    if by_hand:
        result["unmanaged"] = by_hand
    if registration is None:
        return result
    health = _health(registration.url, registration.token)
    result.update(
        running=True,
        pid=registration.pid,
        url=registration.url,
        started=registration.started,
        uptime=round(time.time() - registration.started, 3),
        healthy=health is not None,
        version=health.get("version") if health else None,
    )
    return result


def start_service(settings: Settings) -> dict[str, object]:
    """Start the service detached and return its registration (with the token).

    When one already runs, return its registration with "already_running": True.
    """
    with _service_lock(settings):
        return _start_locked(settings)


def _start_locked(settings: Settings) -> dict[str, object]:
    registration, notes = _current(settings)
    if registration is not None:
        return {**registration.to_dict(), **notes, "already_running": True}
    owner = _unmanaged_owner(settings)
    if owner is not None:
        # A `desk serve` started by hand holds this data dir: use it (never a second writer).
        return {**owner.to_dict(), **notes, "already_running": True, "managed": False}
    orphans = _stop_orphans(settings, timeout=10.0)
    preferred = _preferred_port(settings)
    try:
        ready = _spawn(settings, preferred)
    except ServiceError:
        if preferred == 0:
            raise
        # The last port is taken (or the start failed for another reason): any free port.
        ready = _spawn(settings, 0)
    registration = ServiceRegistration(
        pid=ready.pid, url=ready.url, token=ready.token, started=time.time()
    )
    write_registration(settings.service_registration_path, registration)
    _remember_port(settings, ready.url)
    result = {**registration.to_dict(), **notes, "already_running": False}
    if orphans:
        result["orphans_stopped"] = orphans
    return result


def _unmanaged_owner(settings: Settings) -> ServiceRegistration | None:
    """The healthy service holding the data dir when it is not ours to manage (one of ours
    that lost its registration is an orphan: stopped and replaced instead)."""
    owner = current_owner(settings.data_dir)
    if owner is None or owner.pid in desk_serve_pids(settings.data_dir, settings.runtime_dir):
        return None
    return owner if _health(owner.url, owner.token) is not None else None


def _preferred_port(settings: Settings) -> int:
    """The port of the previous run: the UI's origin (and its service worker cache) stays."""
    try:
        port = int(_port_path(settings).read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return 0
    return port if 1024 <= port <= 65535 else 0


def _remember_port(settings: Settings, url: str) -> None:
    port = url.rsplit(":", 1)[-1].split("/", 1)[0]
    if port.isdigit():
        write_private_file(_port_path(settings), port + "\n")


@dataclass(frozen=True)
class _Ready:
    url: str
    token: str = field(repr=False)
    pid: int


def _spawn(settings: Settings, port: int) -> _Ready:
    """Run `desk serve` detached and return its parsed ready line."""
    argv = desk_command(
        "serve",
        "--port",
        str(port),
        "--data-dir",
        str(settings.data_dir),
        "--runtime-dir",
        str(settings.runtime_dir),
    )
    log_fd = open_log(log_path(settings))
    log_offset = log_size(log_fd)
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log_fd,
            start_new_session=True,
        )
    except OSError as exc:
        raise ServiceError(f"cannot run {argv[0]}: {exc.strerror}") from exc
    finally:
        os.close(log_fd)
    assert proc.stdout is not None  # stdout=PIPE
    try:
        ready = _parse_ready(_read_ready_line(proc, START_TIMEOUT))
    except ServiceError as exc:
        _discard(proc)
        tail = log_tail(log_path(settings), log_offset)
        detail = f"\n{tail}" if tail else ""
        raise ServiceError(f"desk serve {exc} (log: {log_path(settings)}){detail}") from None
    finally:
        # The service prints nothing after its ready line; it logs to stderr only.
        proc.stdout.close()
    _children[proc.pid] = proc
    return ready


def _read_ready_line(proc: subprocess.Popen[bytes], timeout: float) -> bytes:
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    deadline = time.monotonic() + timeout
    buffer = b""
    while b"\n" not in buffer:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise ServiceError(f"did not print its ready line within {timeout:.0f}s")
        readable, _, _ = select.select([fd], [], [], remaining)
        if not readable:
            continue
        chunk = os.read(fd, 4096)
        if not chunk:
            code = proc.wait(timeout=5.0)
            raise ServiceError(f"exited with status {code} before it was ready")
        buffer += chunk
        if len(buffer) > _MAX_READY_LINE:
            raise ServiceError("printed an overlong ready line")
    return buffer.split(b"\n", 1)[0]


def _parse_ready(line: bytes) -> _Ready:
    # Never echo the line: it holds the token.
    try:
        ready = json.loads(line)
    except ValueError:
        raise ServiceError("printed a ready line that is not JSON") from None
    if not isinstance(ready, dict):
        raise ServiceError("printed a ready line that is not a JSON object")
    url, token, pid = ready.get("url"), ready.get("token"), ready.get("pid")
    if not (isinstance(url, str) and url.startswith("http") and isinstance(token, str) and token):
        raise ServiceError("printed a ready line without url and token")
    if not strict_int(pid) or pid <= 0:
        raise ServiceError("printed a ready line without a pid")
    return _Ready(url=url.rstrip("/"), token=token, pid=pid)


def _discard(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        terminate(proc.pid, 5.0)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5.0)


def _stop_orphans(settings: Settings, timeout: float) -> list[int]:
    """Stop managed services of this data dir that no registration names (it was lost)."""
    orphans = desk_serve_pids(settings.data_dir, settings.runtime_dir)
    for pid in orphans:
        log.warning("stopping unregistered service pid %d for %s", pid, settings.data_dir)
        terminate(pid, timeout)
        _forget_child(pid)
    return orphans


def _forget_child(pid: int) -> None:
    proc = _children.pop(pid, None)
    if proc is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=1.0)


def stop_service(
    settings: Settings, *, with_pty_host: bool = False, timeout: float = 10.0
) -> dict[str, object]:
    """SIGTERM the service (SIGKILL past `timeout`) and remove its registration.

    With `with_pty_host`, also ask the PTY host to save its terminals and exit.
    """
    if not timeout > 0:
        raise ValueError("timeout must be a positive number of seconds")
    with _service_lock(settings):
        result = _stop_locked(settings, timeout)
        # Managed services are gone now: any left was started by hand (`desk serve`).
        by_hand = serve_pids_for(settings.data_dir, settings.runtime_dir)
        if by_hand:
            result["unmanaged"] = by_hand
        if with_pty_host and by_hand:
            # It would start a new PTY host at once, reviving every terminal as a new shell.
            result["pty_host"] = {"stopped": False, "saved": 0, "in_use_by": by_hand}
        elif with_pty_host:
            result["pty_host"] = shutdown_pty_host(settings)
        else:
            result["pty_host_running"] = _pty_host_running(settings)
    return result


def _pty_host_running(settings: Settings) -> bool:
    return usable(read_host_registration(settings))


def _stop_locked(settings: Settings, timeout: float) -> dict[str, object]:
    registration, notes = _current(settings)
    result: dict[str, object] = {"stopped": False, "pid": None, "killed": False, **notes}
    if registration is not None:
        pid = registration.pid
        result.update(stopped=True, pid=pid, killed=terminate(pid, timeout))
        _forget_child(pid)
    settings.service_registration_path.unlink(missing_ok=True)
    orphans = _stop_orphans(settings, timeout)
    if orphans:
        result["orphans_stopped"] = orphans
    return result


def restart_service(settings: Settings) -> dict[str, object]:
    """Stop the service, confirm its pid is gone, then start a successor on the same data."""
    with _service_lock(settings):
        stopped = _stop_locked(settings, timeout=10.0)
        previous = stopped.get("pid")
        if isinstance(previous, int) and is_alive(previous):
            raise ServiceError(f"the previous service (pid {previous}) is still alive")
        started = _start_locked(settings)
    return {**started, "previous_pid": previous}


def ensure_service(settings: Settings) -> dict[str, object]:
    """The running service's registration, or a freshly started one; a hung one is replaced,
    and so is a managed one of another Desk version (an upgrade installed while it ran: its
    successor runs this version's code and adopts the PTY host's terminals and jobs)."""
    info = start_service(settings)
    if not info.get("already_running"):
        return info
    health = _health(str(info["url"]), str(info["token"]))
    if health is None:
        log.warning("service pid %s does not answer; restarting it", info["pid"])
        return restart_service(settings)
    if health.get("version") != __version__ and info.get("managed", True):
        log.info(
            "service pid %s runs Desk %s; restarting it as %s",
            info["pid"],
            health.get("version"),
            __version__,
        )
        return restart_service(settings)
    return info
