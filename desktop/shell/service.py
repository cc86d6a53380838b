"""The managed background service behind `desk service start|stop|restart|status` and the window.

One `desk serve` per data dir runs detached (own session, stdin closed, stderr to
data_dir/service.log). Its registration (pid, url, token, started) sits in the runtime dir,
0600. Every change goes through an flock on runtime_dir/service.lock, so two callers never
start two services or clean a registration that another caller has just written.
"""

from __future__ import annotations

import contextlib
import fcntl
import http.client
import importlib
import json
import os
import select
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from desktop.config import Settings, desk_command, write_private_file
from desktop.shell.process import (
    desk_serve_pids,
    is_alive,
    is_desk_serve,
    serve_pids_for,
    terminate,
)
from desktop.shell.registration import (
    ServiceRegistration,
    load_registration,
    remove_registration,
    save_registration,
)

START_TIMEOUT = 60.0
LOCK_TIMEOUT = 120.0
HEALTH_TIMEOUT = 3.0
LOG_ROTATE_BYTES = 5 * 1024 * 1024
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
    path = _lock_path(settings)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise ServiceError(
                        f"another desk has held {path} for over {timeout:.0f}s"
                    ) from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _current(settings: Settings) -> tuple[ServiceRegistration | None, dict[str, object]]:
    """The live registration (or None) and what was cleaned on the way. Call under the lock."""
    path = settings.service_registration_path
    registration, corrupt = load_registration(path)
    notes: dict[str, object] = {"stale_cleaned": False, "corrupt_cleaned": corrupt}
    if registration is not None and not is_desk_serve(registration.pid, settings.data_dir):
        # Dead, or the pid now belongs to another program.
        remove_registration(path)
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
    save_registration(settings.service_registration_path, registration)
    _remember_port(settings, ready.url)
    result = {**registration.to_dict(), **notes, "already_running": False}
    if orphans:
        result["orphans_stopped"] = orphans
    return result


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


def _open_log(settings: Settings) -> int:
    path = log_path(settings)
    with contextlib.suppress(FileNotFoundError):
        if path.stat().st_size > LOG_ROTATE_BYTES:
            path.replace(path.with_name(path.name + ".1"))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    os.fchmod(fd, 0o600)
    return fd


def _log_tail(settings: Settings, offset: int, lines: int = 10) -> str:
    try:
        with log_path(settings).open("rb") as handle:
            handle.seek(offset)
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(text.strip().splitlines()[-lines:])


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
    log_fd = _open_log(settings)
    log_offset = os.fstat(log_fd).st_size
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
        tail = _log_tail(settings, log_offset)
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
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
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
        print(
            f"desk: warning: stopping unregistered service pid {pid} for {settings.data_dir}",
            file=sys.stderr,
        )
        terminate(pid, timeout)
        _forget_child(pid)
    return orphans


def _forget_child(pid: int) -> None:
    proc = _children.pop(pid, None)
    if proc is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=1.0)


def stop_service(
    settings: Settings, *, all: bool = False, timeout: float = 10.0
) -> dict[str, object]:
    """SIGTERM the service (SIGKILL past `timeout`) and remove its registration.

    With `all`, also ask the PTY host to save its terminals and exit.
    """
    if not timeout > 0:
        raise ValueError("timeout must be a positive number of seconds")
    with _service_lock(settings):
        result = _stop_locked(settings, timeout)
        # Managed services are gone now: any left was started by hand (`desk serve`).
        by_hand = serve_pids_for(settings.data_dir, settings.runtime_dir)
        if by_hand:
            result["unmanaged"] = by_hand
        if all and by_hand:
            # It would start a new PTY host at once, reviving every terminal as a new shell.
            result["pty_host"] = {"stopped": False, "saved": 0, "in_use_by": by_hand}
        elif all:
            result["pty_host"] = _shutdown_pty_host(settings)
        else:
            result["pty_host_running"] = _pty_host_running(settings)
    return result


def _pty_host_running(settings: Settings) -> bool:
    from desktop.ptyhost.registration import read_registration, usable

    return usable(read_registration(settings))


def _stop_locked(settings: Settings, timeout: float) -> dict[str, object]:
    registration, notes = _current(settings)
    result: dict[str, object] = {"stopped": False, "pid": None, "killed": False, **notes}
    if registration is not None:
        pid = registration.pid
        result.update(stopped=True, pid=pid, killed=terminate(pid, timeout))
        _forget_child(pid)
    remove_registration(settings.service_registration_path)
    orphans = _stop_orphans(settings, timeout)
    if orphans:
        result["orphans_stopped"] = orphans
    return result


def _shutdown_pty_host(settings: Settings) -> object:
    # Imported late: the PTY host client is only needed when quitting everything.
    try:
        client = importlib.import_module("desktop.ptyhost.client")
    except ImportError as exc:
        client, problem = None, str(exc)
    shutdown = getattr(client, "shutdown_pty_host", None)
    if shutdown is None:
        problem = "desktop.ptyhost.client has no shutdown_pty_host" if client else problem
        print(f"desk: warning: cannot stop the PTY host ({problem})", file=sys.stderr)
        return {"stopped": False, "error": "PTY host client unavailable"}
    return shutdown(settings)


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
    """The running service's registration, or a freshly started one; a hung one is replaced."""
    info = start_service(settings)
    if info.get("already_running") and _health(str(info["url"]), str(info["token"])) is None:
        print(
            f"desk: warning: service pid {info['pid']} does not answer; restarting it",
            file=sys.stderr,
        )
        info = restart_service(settings)
    return info
