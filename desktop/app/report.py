"""What `desk service start|stop|restart|status` tell a person: sentences built from the result
dicts that `--json` prints as they are. Each sentence says what happened and, where something
was left running, why and what to do about it."""

from __future__ import annotations

from collections.abc import Callable

from desktop.config import Settings

Result = dict[str, object]


def _pids(value: object) -> list[int]:
    return [pid for pid in value if isinstance(pid, int)] if isinstance(value, list) else []


def _pid_list(pids: list[int]) -> str:
    words = [str(pid) for pid in pids]
    if len(words) == 1:
        return f"pid {words[0]}"
    return f"pids {', '.join(words[:-1])} and {words[-1]}"


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes = int(seconds // 60)
    if minutes < 90:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"


def _cleaning(result: Result) -> list[str]:
    lines = []
    if result.get("stale_cleaned"):
        lines.append(
            f"Removed the registration of a service that is gone (pid {result.get('stale_pid')})."
        )
    if result.get("corrupt_cleaned"):
        lines.append("Removed a service registration that could not be read.")
    orphans = _pids(result.get("orphans_stopped"))
    if orphans:
        lines.append(f"Also stopped unregistered background services ({_pid_list(orphans)}).")
    return lines


def _by_hand(result: Result, settings: Settings) -> list[str]:
    pids = _pids(result.get("unmanaged"))
    if not pids:
        return []
    return [
        f"A `desk serve` started by hand ({_pid_list(pids)}) serves {settings.data_dir}; "
        f"it was left alone: stop it in its own terminal (Ctrl+C) or with `kill {pids[0]}`."
    ]


def describe_start(result: Result, settings: Settings) -> list[str]:
    url = result.get("url")
    if result.get("already_running"):
        return [f"desk service: already running (pid {result.get('pid')}) at {url}"]
    return [
        f"Started the Desk service (pid {result.get('pid')}) at {url}/.",
        *_cleaning(result),
        f"Sign in once from a browser with {url}/?token=<the token in {settings.token_path}>.",
    ]


def _pty_host(result: Result) -> list[str]:
    if "pty_host" not in result:
        if result.get("pty_host_running"):
            return [
                "The PTY host keeps running with your terminals for the next service "
                "(`desk service stop --all` also stops it)."
            ]
        return []
    host = result["pty_host"]
    host = host if isinstance(host, dict) else {}
    users = _pids(host.get("in_use_by"))
    if users:
        return [
            f"Did not stop the PTY host: the `desk serve` {_pid_list(users)} uses it and would "
            "start a new one at once, bringing every terminal back as a new shell. Stop that "
            "service first, then run `desk service stop --all` again."
        ]
    if host.get("error"):
        return [f"Could not stop the PTY host: {host['error']}."]
    if host.get("stopped") and host.get("protocol") is not None:
        return [
            f"Stopped the PTY host of protocol version {host['protocol']} that another Desk "
            "version left running; it saved its terminals, and the next start brings back "
            "the ones this version can read."
        ]
    if host.get("stopped"):
        saved = host.get("saved")
        count = saved if isinstance(saved, int) else 0
        return [
            f"Saved {_plural(count, 'terminal')} and stopped the PTY host; "
            "they come back when Desk starts again."
        ]
    return ["No PTY host was running."]


def describe_stop(result: Result, settings: Settings) -> list[str]:
    if result.get("stopped"):
        first = f"Stopped the Desk service (pid {result.get('pid')})."
        if result.get("killed"):
            first += " It did not stop within 10 s, so it was killed."
    else:
        first = f"No background Desk service was running for {settings.data_dir}."
    return [first, *_cleaning(result), *_by_hand(result, settings), *_pty_host(result)]


def describe_restart(result: Result, settings: Settings) -> list[str]:
    previous = result.get("previous_pid")
    url = result.get("url")
    first = (
        f"Restarted the Desk service: pid {previous} stopped, pid {result.get('pid')} "
        f"serves {url}/."
        if isinstance(previous, int)
        else f"Started the Desk service (pid {result.get('pid')}) at {url}/; none was running."
    )
    return [first, *_cleaning(result)]


def describe_status(result: Result, settings: Settings) -> list[str]:
    if result.get("running"):
        uptime = result.get("uptime")
        up = f", up {_duration(float(uptime))}" if isinstance(uptime, int | float) else ""
        health = (
            "it answers health checks."
            if result.get("healthy")
            else f"it does not answer health checks (log: {result.get('log')})."
        )
        where = f"(pid {result.get('pid')}{up}) at {result.get('url')}/"
        first = f"The Desk service is running {where}; {health}"
    else:
        first = f"No background Desk service is running for {settings.data_dir}."
    return [first, *_cleaning(result), *_by_hand_status(result, settings)]


def _by_hand_status(result: Result, settings: Settings) -> list[str]:
    pids = _pids(result.get("unmanaged"))
    if not pids:
        return []
    return [f"A `desk serve` started by hand ({_pid_list(pids)}) serves {settings.data_dir}."]


DESCRIBERS: dict[str, Callable[[Result, Settings], list[str]]] = {
    "start": describe_start,
    "stop": describe_stop,
    "restart": describe_restart,
    "status": describe_status,
}


def failed(action: str, result: Result) -> bool:
    """True when the command did not do what it was asked (its exit status is then 1)."""
    host = result.get("pty_host")
    if action != "stop" or not isinstance(host, dict):
        return False
    return bool(host.get("in_use_by") or host.get("error"))
