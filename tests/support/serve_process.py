"""`desk serve` as a child process of an async test: started on a free port, its stderr in a
log file, its ready line parsed."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

READY_DEADLINE = 30.0


async def spawn_serve(
    log: Path, ready_within: float = READY_DEADLINE
) -> tuple[asyncio.subprocess.Process, dict[str, Any]]:
    """The running service and its ready line (`{url, token, pid}`), printed within
    `ready_within` seconds (a start that recovers much work first may need more)."""
    with open(log, "a") as err:  # noqa: ASYNC230 - opening a log file for the child
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "desktop", "serve", "--port", "0",
            stdout=subprocess.PIPE, stderr=err, env=dict(os.environ),
        )  # fmt: skip
    assert process.stdout is not None
    line = await asyncio.wait_for(process.stdout.readline(), ready_within)
    assert line, f"desk serve printed nothing; see {log}"
    ready = json.loads(line)
    assert isinstance(ready, dict)
    return process, ready
