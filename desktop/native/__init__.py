"""Processes in pseudo-terminals: the native cffi backend, or ptyprocess as a fallback.

`spawn` starts a program as a session leader whose controlling terminal is a new PTY and
returns a `PtyProcess` handle on the master side. Both backends share argument checks,
executable lookup and the wait/signal/foreground logic in `PtyProcessBase`.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Mapping, Sequence

from desktop.native.base import (
    MAX_DIMENSION,
    ExitStatus,
    PtyProcess,
    PtyProcessBase,
    SpawnRequest,
    make_request,
)

__all__ = [
    "BACKEND",
    "MAX_DIMENSION",
    "ExitStatus",
    "PtyProcess",
    "PtyProcessBase",
    "SpawnRequest",
    "spawn",
]

logger = logging.getLogger("desk.native")


def _detect_backend() -> str:
    try:
        importlib.import_module("desktop.native._pty")
    except ImportError as error:
        logger.warning(
            "native PTY extension desktop.native._pty unavailable (%s); using ptyprocess "
            "(build it with `pip install -e .` or `python native/pty_build.py`)",
            error,
        )
        return "ptyprocess"
    return "native"


BACKEND: str = _detect_backend()


def spawn(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str,
    cols: int,
    rows: int,
    backend: str | None = None,
) -> PtyProcess:
    """Start argv[0] (looked up in env["PATH"], else os.defpath) in a new PTY of cols x rows,
    as a session leader in cwd with exactly env as its environment.

    Raises ValueError/TypeError for bad arguments, FileNotFoundError when the program is not
    found, FileNotFoundError/NotADirectoryError for a bad cwd, PermissionError when not
    executable; nothing is left behind on failure."""
    request = make_request(argv, env, cwd, cols, rows)
    chosen = BACKEND if backend is None else backend
    if chosen == "native":
        from desktop.native.native_backend import spawn_native  # loads the cffi module

        return spawn_native(request)
    if chosen == "ptyprocess":
        from desktop.native.fallback import spawn_fallback

        return spawn_fallback(request)
    raise ValueError(f"unknown PTY backend {chosen!r} (expected 'native' or 'ptyprocess')")
