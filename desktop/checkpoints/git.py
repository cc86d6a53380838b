"""Running git for the shadow repositories: asyncio subprocesses, never a wait on the loop,
that die with the service."""

from __future__ import annotations

import asyncio
import ctypes
import os
import signal
import sys
from collections.abc import Callable, Mapping, Sequence

_PR_SET_PDEATHSIG = 1
_prctl = ctypes.CDLL(None, use_errno=True).prctl if sys.platform == "linux" else None


def _dies_with(parent: int) -> Callable[[], None] | None:
    """What a git child runs before exec (on Linux): be killed when `parent`, the service,
    dies. A git a killed service left running would race its successor's, which removes
    the index lock (as one a killed process left) to finish a half-done revert."""
    prctl = _prctl
    if prctl is None:
        return None

    def setup() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the service died before the signal was asked for
            os._exit(1)

    return setup


class GitError(RuntimeError):
    """git exited non-zero, or could not be started; the message carries its stderr."""


async def run_git(
    args: Sequence[str], env: Mapping[str, str], *, stdin: bytes | None = None, cwd: str = "/"
) -> bytes:
    """git's stdout; GitError when it fails."""
    try:
        process = await asyncio.create_subprocess_exec(
            "git",
            *args,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=dict(env),
            cwd=cwd,
            preexec_fn=_dies_with(os.getpid()),
        )
    except OSError as exc:
        raise GitError(f"git could not be started: {exc}") from exc
    try:
        out, err = await process.communicate(stdin)
    except asyncio.CancelledError:
        if process.returncode is None:
            process.kill()
            await process.wait()
        raise
    if process.returncode != 0:
        message = err.decode(errors="replace").strip() or f"exit {process.returncode}"
        raise GitError(f"git {args[0]}: {message}")
    return out


def nul_list(raw: bytes) -> list[str]:
    """The entries of a `-z` listing, decoded as the file system's names are."""
    return [p.decode("utf-8", "surrogateescape") for p in raw.split(b"\0") if p]


def nul_input(paths: Sequence[str]) -> bytes:
    return b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)
