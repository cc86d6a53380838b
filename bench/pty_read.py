"""PTY read throughput: native read_into vs plain os.read, measured in the same run.

Each reader waits for readability with select, then makes one read call, as the PTY host's
event-loop reader does. Prints, as medians of 3 runs: MB/s and its ratio to the os.read
baseline, the mean bytes returned per wakeup, and the reader's own CPU time (the producer's
tty work is in the child and the kernel, which is why MB/s barely depends on the reader).

    .venv/bin/python bench/pty_read.py [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import select
import statistics
import sys
import time
from collections.abc import Callable
from typing import NamedTuple

from desktop.native import BACKEND, PtyProcess, spawn

COMMANDS = {
    "100 MB of 'a' (head | tr)": "head -c 100000000 /dev/zero | tr '\\0' a",
    "seq 1 10000000": "seq 1 10000000",
}

Reader = Callable[[PtyProcess], int]  # bytes read, 0 if none; EOFError at the end


def os_read_64k(proc: PtyProcess) -> int:
    try:
        return len(os.read(proc.fd, 65536))
    except BlockingIOError:
        return 0
    except OSError:
        raise EOFError from None


def read_into_reader(size: int) -> Reader:
    buffer = bytearray(size)
    view = memoryview(buffer)

    def read(proc: PtyProcess) -> int:
        return proc.read_into(view)

    return read


def read_bytes_64k(proc: PtyProcess) -> int:
    return len(proc.read(65536))


READERS: dict[str, Reader] = {
    "os.read 64 KiB (baseline)": os_read_64k,
    "read() 64 KiB": read_bytes_64k,
    "read_into 64 KiB": read_into_reader(64 * 1024),
    "read_into 256 KiB": read_into_reader(256 * 1024),
}


class Sample(NamedTuple):
    mb_per_s: float
    kib_per_wakeup: float
    reader_cpu_s: float


def measure(command: str, reader: Reader, backend: str) -> Sample:
    """One run of command through reader."""
    proc = spawn(
        ["sh", "-c", command],
        env={"PATH": os.environ.get("PATH", os.defpath), "LC_ALL": "C"},
        cwd="/",
        cols=200,
        rows=50,
        backend=backend,
    )
    total = wakeups = 0
    poller = select.poll()
    poller.register(proc.fd, select.POLLIN)
    started, cpu_started = time.perf_counter(), time.process_time()
    try:
        while True:
            poller.poll()
            wakeups += 1
            total += reader(proc)
    except EOFError:
        pass
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    proc.close()
    pidfd = os.pidfd_open(proc.pid)  # readable once the child has exited
    select.select([pidfd], [], [], 10)
    os.close(pidfd)
    proc.poll_exit()
    return Sample(total / 1e6 / elapsed, total / 1024 / max(wakeups, 1), cpu)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--backend", default=BACKEND, choices=["native", "ptyprocess"])
    args = parser.parse_args()
    print(f"backend: {args.backend}, runs: {args.runs}, median MB/s (ratio vs baseline)")
    for label, command in COMMANDS.items():
        print(f"\n{label}")
        samples: dict[str, list[Sample]] = {name: [] for name in READERS}
        for _ in range(args.runs):  # interleaved, so drift in machine load hits all alike
            for name, reader in READERS.items():
                samples[name].append(measure(command, reader, args.backend))
        medians = {
            name: Sample(*(statistics.median(column) for column in zip(*runs, strict=True)))
            for name, runs in samples.items()
        }
        baseline = medians["os.read 64 KiB (baseline)"].mb_per_s
        for name, m in medians.items():
            print(
                f"  {name:28} {m.mb_per_s:7.1f} MB/s  x{m.mb_per_s / baseline:.2f}"
                f"  {m.kib_per_wakeup:6.1f} KiB/wakeup  reader CPU {m.reader_cpu_s:5.2f} s"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
