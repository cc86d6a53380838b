"""Running git for the shadow repositories: asyncio subprocesses, never a wait on the loop."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence


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
