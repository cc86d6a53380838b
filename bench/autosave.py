"""Does the PTY host's crash autosave stay off the hot path? The same service is measured twice
in this run: with autosave effectively off (an interval of an hour: one save per terminal at
start) and saving every 0.1 s while busy terminals keep changing. Throughput and
keystroke echo of another terminal are compared as ratios to the first.

Run: .venv/bin/python bench/autosave.py [--runs N] [--busy N]

Prints medians; never asserts on time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from terminals import MB, Bench, Service, bulk_command  # noqa: E402


async def measure(interval: str, args: argparse.Namespace) -> tuple[list[float], list[float], int]:
    """MB/s of bulk output, echo latencies (ms) and autosave files, with `busy` terminals
    printing a line every 50 ms meanwhile."""
    with tempfile.TemporaryDirectory(prefix="desk-bench-", dir="/tmp") as base:
        service = Service(Path(base))
        service.env["DESK_PTY_AUTOSAVE_SECONDS"] = interval
        service.start()
        try:
            async with aiohttp.ClientSession(headers=service.headers) as session:
                bench = Bench(service, session)
                for _ in range(args.busy):
                    await bench.create("while :; do date +%s%N; sleep 0.05; done")
                rates = []
                for _ in range(args.runs):
                    total, seconds = await bench.throughput(bulk_command(args.mb * MB))
                    rates.append(total / seconds / MB)
                echoes = [1000 * x for x in await bench.echo_latencies(args.samples)]
            saved = len(list((service.data / "terminals" / "autosave").glob("*.json")))
        finally:
            await service.stop()
    return rates, echoes, saved


async def run(args: argparse.Namespace) -> None:
    off_rates, off_echoes, _ = await measure("3600", args)
    on_rates, on_echoes, saved = await measure("0.1", args)
    off_mb, on_mb = statistics.median(off_rates), statistics.median(on_rates)
    off_ms, on_ms = statistics.median(off_echoes), statistics.median(on_echoes)
    print(f"{args.busy} busy terminals; {saved} autosave files at the end of the 0.1 s run")
    print(f"{'':28}{'autosave 1 h':>14}{'autosave 0.1 s':>16}{'ratio':>8}")
    print(f"{'bulk output, MB/s (median)':28}{off_mb:14.1f}{on_mb:16.1f}{on_mb / off_mb:8.2f}")
    print(f"{'echo latency, ms (median)':28}{off_ms:14.2f}{on_ms:16.2f}{on_ms / off_ms:8.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="bulk runs per mode")
    parser.add_argument("--mb", type=int, default=20, help="MB of bulk output per run")
    parser.add_argument("--samples", type=int, default=50, help="echo samples per mode")
    parser.add_argument("--busy", type=int, default=8, help="terminals changing meanwhile")
    args = parser.parse_args(argv)
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    asyncio.run(run(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
