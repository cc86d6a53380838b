"""Screen model throughput: feeding floods (skipped at C speed) vs parsing with pyte.

Prints medians of N runs (default 5), all measured in the same run:
- feed throughput (MB/s) of 50 MB of `yes` output, `seq 1 10000000` output, 50 MB of
  ls/git-like coloured lines, 100 MB without a line feed (`head -c 100000000 /dev/zero |
  tr '\\0' a`) and 50 MB of 10,000-character lines, each in 64 KiB chunks as the PTY host's
  reader delivers them, then the time of catch_up + checkpoint after the flood and how many
  bytes were left to parse;
- the baseline: plain pyte (Screen + ByteStream) parsing 2 MB of the same outputs;
- output the model cannot skip (cursor-addressed full-screen redraws, as vim/htop send):
  parse throughput of the model (feed + catch_up), of its parser classes alone, of the
  reference classes and of plain pyte.

    .venv/bin/python bench/screen.py [--runs 5] [--cols 120] [--rows 40]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import pyte

from desktop.ptyhost.screen import ScreenModel
from desktop.ptyhost.screen.fast import FastScreen, FastStream
from desktop.ptyhost.screen.reference import TerminalScreen, TerminalStream

CHUNK = 64 * 1024
MB = 1_000_000


def yes_output(size: int) -> bytes:
    return (b"y\r\n" * (size // 3 + 1))[:size]


def seq_output(count: int) -> bytes:
    return b"".join(b"%d\r\n" % i for i in range(1, count + 1))


def coloured_output(size: int) -> bytes:
    block = b"".join(
        b"\x1b[01;3%dm%08d\x1b[0m  src/module_%d.py \x1b[38;5;%dm+%d\x1b[m\x1b[K\r\n"
        % (i % 8, i, i % 97, i % 256, i * 7)
        for i in range(20000)
    )
    return (block * (size // len(block) + 1))[:size]


def no_line_feeds(size: int) -> bytes:
    return b"a" * size


def long_lines(size: int, length: int = 10_000) -> bytes:
    line = bytes(range(0x20, 0x7F)) * (length // 95 + 1)
    block = b"".join(line[i % 95 : i % 95 + length] + b"\r\n" for i in range(97))
    return (block * (size // len(block) + 1))[:size]


def redraw_output(frames: int, cols: int, rows: int) -> bytes:
    out = [b"\x1b[?1049h\x1b[?25l"]
    for frame in range(frames):
        for y in range(rows):
            text = (b"%d:%d " % (frame, y) * cols)[: cols - 8]
            colour = (frame + y) % 256
            out.append(b"\x1b[%d;1H\x1b[38;5;%dm%s\x1b[1;7m  \x1b[0m\x1b[K" % (y + 1, colour, text))
        out.append(b"\x1b[%d;%dH" % (rows, cols // 2))
    return b"".join(out)


def median_of(runs: int, measure: Callable[[], float]) -> float:
    return statistics.median(measure() for _ in range(runs))


def chunks(data: bytes) -> list[bytes]:
    return [data[i : i + CHUNK] for i in range(0, len(data), CHUNK)]


def flood(name: str, data: bytes, cols: int, rows: int, runs: int, baseline: float) -> None:
    pieces = chunks(data)
    feed_rates, finish_times, left = [], [], []
    for _ in range(runs):
        model = ScreenModel(cols, rows)
        model.feed(b"\x1b]0;user@host\x07\x1b[01;32m$\x1b[0m command\r\n")
        model.catch_up()
        start = time.perf_counter()
        for piece in pieces:
            model.feed(piece)
        feed_rates.append(len(data) / (time.perf_counter() - start) / MB)
        left.append(model.pending_bytes)
        start = time.perf_counter()
        model.catch_up()
        model.checkpoint()
        finish_times.append(time.perf_counter() - start)
    rate = statistics.median(feed_rates)
    print(
        f"{name:<34} {len(data) / MB:7.1f} MB  feed {rate:9.1f} MB/s "
        f"({rate / baseline:7.0f}x pyte)  left {statistics.median(left) / 1024:6.1f} KiB  "
        f"catch_up+checkpoint {statistics.median(finish_times) * 1000:6.1f} ms"
    )


def parse_rate(data: bytes, make: Callable[[], Callable[[bytes], None]], runs: int) -> float:
    def measure() -> float:
        feed = make()
        start = time.perf_counter()
        for piece in chunks(data):
            feed(piece)
        return len(data) / (time.perf_counter() - start) / MB

    return median_of(runs, measure)


def pyte_feeder(cols: int, rows: int) -> Callable[[], Callable[[bytes], None]]:
    def make() -> Callable[[bytes], None]:
        return pyte.ByteStream(pyte.Screen(cols, rows)).feed

    return make


def class_feeder(
    screen_class: type[TerminalScreen], stream_class: type[TerminalStream], cols: int, rows: int
) -> Callable[[], Callable[[bytes], None]]:
    def make() -> Callable[[bytes], None]:
        return stream_class(screen_class(cols, rows)).feed

    return make


def model_feeder(cols: int, rows: int) -> Callable[[], Callable[[bytes], None]]:
    def make() -> Callable[[bytes], None]:
        model = ScreenModel(cols, rows)

        def feed(data: bytes) -> None:
            model.feed(data)
            model.catch_up()

        return feed

    return make


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cols", type=int, default=120)
    parser.add_argument("--rows", type=int, default=40)
    args = parser.parse_args()
    runs, cols, rows = args.runs, args.cols, args.rows
    print(f"terminal {cols}x{rows}, medians of {runs} runs, feeds in {CHUNK // 1024} KiB chunks")

    yes, seq, coloured = yes_output(50 * MB), seq_output(10_000_000), coloured_output(50 * MB)
    plain, long = no_line_feeds(100 * MB), long_lines(50 * MB)
    print("\nbaseline: plain pyte Screen + ByteStream on 2 MB")
    baselines = {}
    for name, data in (
        ("yes", yes),
        ("seq", seq),
        ("coloured", coloured),
        ("no LF", plain),
        ("long lines", long),
    ):
        baselines[name] = parse_rate(data[: 2 * MB], pyte_feeder(cols, rows), runs)
        print(f"  {name:<10} {baselines[name]:6.2f} MB/s")

    print("\nfloods fed to ScreenModel (skipped without parsing)")
    flood("yes (50 MB)", yes, cols, rows, runs, baselines["yes"])
    flood("seq 1 10000000", seq, cols, rows, runs, baselines["seq"])
    flood("coloured lines (50 MB)", coloured, cols, rows, runs, baselines["coloured"])
    flood("no line feeds (100 MB of 'a')", plain, cols, rows, runs, baselines["no LF"])
    flood("10,000-character lines (50 MB)", long, cols, rows, runs, baselines["long lines"])
    del yes, seq, coloured, plain, long

    redraws = redraw_output(60, cols, rows)
    print(f"\nnot skippable: cursor-addressed full-screen redraws ({len(redraws) / MB:.1f} MB)")
    pyte_rate = parse_rate(redraws, pyte_feeder(cols, rows), runs)
    for name, make in (
        ("plain pyte", pyte_feeder(cols, rows)),
        ("reference (TerminalScreen)", class_feeder(TerminalScreen, TerminalStream, cols, rows)),
        ("FastScreen + FastStream", class_feeder(FastScreen, FastStream, cols, rows)),
        ("ScreenModel feed + catch_up", model_feeder(cols, rows)),
    ):
        rate = pyte_rate if name == "plain pyte" else parse_rate(redraws, make, runs)
        print(f"  {name:<30} {rate:6.2f} MB/s  ({rate / pyte_rate:4.1f}x pyte)")
    model = ScreenModel(cols, rows)
    model.feed(redraws)
    model.catch_up()
    checkpoint_time = median_of(runs, lambda: _time(model.checkpoint))
    print(f"  checkpoint of a full coloured screen: {checkpoint_time * 1000:.1f} ms")


def _time(function: Callable[[], object]) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
