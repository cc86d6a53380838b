"""Session store benchmarks: the durable bus, SSE fan-out, message pages and replay, each
beside a baseline measured the same way in the same run.

Run: .venv/bin/python bench/store.py [--runs N] [--quick] [--only SECTION ...]

Sections: append (events appended and projected per second, batches of 1 and 100, against
raw sqlite3 inserts of the same event rows; target >= 0.3x), fanout (SSE to 50
subscribers over real sockets, events/s delivered, against one subscriber), page (latest
page of a 10,000-message session over HTTP, against the raw SELECT + json.loads and an
HTTP health round trip; target < 20 ms), replay (100,000 events into an empty database,
against raw executemany of the same rows; target < 5 s). The chat view's first paint of a
10,000-message session in Chromium is bench/ui_chat.py's. Medians; nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from desktop.config import load_settings  # noqa: E402
from desktop.events.bus import Draft, DurableBus, draft, replay  # noqa: E402
from desktop.events.fanout import Fanout  # noqa: E402
from desktop.events.ids import new_id  # noqa: E402
from desktop.server.app import create_app  # noqa: E402
from desktop.server.appkeys import ENGINE  # noqa: E402
from desktop.store import log  # noqa: E402
from desktop.store.db import Store  # noqa: E402
from desktop.store.log import Event  # noqa: E402

Row = tuple[str, str, str, str]
MODEL = {"id": "model", "provider_id": "provider"}


def turn(session_id: str, i: int) -> list[Draft]:
    """One realistic exchange: a prompt, a step, two text blocks, a tool call, the end.
    Message ids are minted as the service mints them (time-ordered)."""
    mid = new_id("msg")
    return [
        draft(
            session_id,
            "session.prompted",
            {"message_id": new_id("msg"), "text": "x" * 200, "mode": "queue"},
        ),
        draft(
            session_id,
            "session.step.started",
            {"message_id": mid, "agent": "build", "model": MODEL},
        ),
        draft(session_id, "session.text", {"message_id": mid, "text": "y" * 400}),
        draft(
            session_id,
            "session.tool.called",
            {"message_id": mid, "call_id": "c", "name": "read", "input": {"path": "a"}},
        ),
        draft(
            session_id,
            "session.tool.success",
            {"message_id": mid, "call_id": "c", "content": "z" * 300},
        ),
        draft(session_id, "session.text", {"message_id": mid, "text": "w" * 200}),
        draft(session_id, "session.step.ended", {"message_id": mid, "finish": "stop"}),
    ]


def events_for(count: int, sessions: int) -> list[Draft]:
    out: list[Draft] = []
    i = 0
    while len(out) < count:
        out += turn(f"ses_{i % sessions}", i)
        i += 1
    return out[:count]


def created(sessions: int) -> list[Draft]:
    return [
        draft(f"ses_{i}", "session.created", {"title": "b", "directory": "/"})
        for i in range(sessions)
    ]


# ----- baselines --------------------------------------------------------------------------

RAW_SCHEMA = (
    "CREATE TABLE event (position INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE, "
    "aggregate_id TEXT, seq INTEGER, type TEXT, version INTEGER, created INTEGER, data JSON); "
    "CREATE UNIQUE INDEX event_agg ON event (aggregate_id, seq)"
)


def raw_connection(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = wal")
    conn.execute("PRAGMA synchronous = normal")
    conn.executescript(RAW_SCHEMA)
    return conn


def raw_rows(drafts: list[Draft]) -> list[tuple[Any, ...]]:
    seqs: dict[str, int] = {}
    rows = []
    for n, d in enumerate(drafts):
        seqs[d.aggregate_id] = seqs.get(d.aggregate_id, 0) + 1
        rows.append(
            (f"evt_{n}", d.aggregate_id, seqs[d.aggregate_id], d.type, 1, n, log.dumps(d.data))
        )
    return rows


def raw_insert(path: Path, drafts: list[Draft], batch: int) -> float:
    """Seconds to insert the drafts' event rows with plain sqlite3, one commit per batch
    (their data encoded to JSON in the timed part, as the bus must)."""
    conn = raw_connection(path)
    sql = (
        "INSERT INTO event (id, aggregate_id, seq, type, version, created, data) "
        "VALUES (?,?,?,?,?,?,?)"
    )
    started = time.perf_counter()
    rows = raw_rows(drafts)
    for start in range(0, len(rows), batch):
        conn.execute("BEGIN")
        conn.executemany(sql, rows[start : start + batch])
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - started
    conn.close()
    return elapsed


# ----- append + project through the bus -----------------------------------------------------


async def bus_append(path: Path, drafts: list[Draft], batch: int, sessions: int) -> float:
    store = Store(path)
    await store.open()
    bus = DurableBus(store, Fanout())
    bus.start()
    await bus.publish(created(sessions))
    started = time.perf_counter()
    for start in range(0, len(drafts), batch):
        await bus.publish(drafts[start : start + batch])
    elapsed = time.perf_counter() - started
    await bus.stop()
    await store.close()
    return elapsed


async def bus_append_concurrent(path: Path, drafts: list[Draft], sessions: int) -> float:
    """One event per publish, but one publisher per session at once (as several running
    sessions would): the writer batches what is queued."""
    store = Store(path)
    await store.open()
    bus = DurableBus(store, Fanout())
    bus.start()
    await bus.publish(created(sessions))
    per: dict[str, list[Draft]] = {}
    for d in drafts:
        per.setdefault(d.aggregate_id, []).append(d)

    async def publisher(items: list[Draft]) -> None:
        for d in items:
            await bus.publish(d)

    started = time.perf_counter()
    await asyncio.gather(*(publisher(items) for items in per.values()))
    elapsed = time.perf_counter() - started
    await bus.stop()
    await store.close()
    return elapsed


async def section_append(args: argparse.Namespace, tmp: Path) -> list[Row]:
    rows: list[Row] = []
    count = 2000 if args.quick else 10000
    sessions = 20
    drafts = events_for(count, sessions)
    for batch in (1, 100):
        ours, raw = [], []
        for run in range(args.runs):
            ours.append(
                count / await bus_append(tmp / f"bus-{batch}-{run}.db", drafts, batch, sessions)
            )
            raw.append(count / raw_insert(tmp / f"raw-{batch}-{run}.db", drafts, batch))
        o, r = statistics.median(ours), statistics.median(raw)
        rows.append(
            (
                f"append+project, batch {batch}",
                f"{o:,.0f} ev/s",
                f"{r:,.0f} ev/s (raw sqlite3)",
                f"{o / r:.2f}x",
            )
        )
    conc = []
    for run in range(args.runs):
        conc.append(count / await bus_append_concurrent(tmp / f"conc-{run}.db", drafts, sessions))
    raw1 = statistics.median(
        [count / raw_insert(tmp / f"raw1b-{r}.db", drafts, 1) for r in range(args.runs)]
    )
    c = statistics.median(conc)
    rows.append(
        (
            f"append+project, 1/publish, {sessions} publishers",
            f"{c:,.0f} ev/s",
            f"{raw1:,.0f} ev/s (raw, batch 1)",
            f"{c / raw1:.2f}x",
        )
    )
    return rows


# ----- the service on a real socket ---------------------------------------------------------


class Service:
    def __init__(self, tmp: Path) -> None:
        os.environ["DESK_DATA_DIR"] = str(tmp / "data")
        os.environ["DESK_RUNTIME_DIR"] = str(tmp / "run")
        self.token = "b" * 43
        self.app = create_app(load_settings(), token=self.token)
        self.runner = web.AppRunner(self.app, access_log=None)
        self.url = ""

    async def __aenter__(self) -> Service:
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        port = self.runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.runner.cleanup()

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


async def count_ids(response: aiohttp.ClientResponse, want: int) -> None:
    """Reads until `want` durable frames arrived; counts frame starts in whole chunks, so the
    client's own cost stays small beside the server's."""
    seen = 0
    tail = b""
    async for chunk in response.content.iter_any():
        data = tail + chunk
        seen += data.count(b"\nid: ")
        tail = data[-4:]  # a match across chunks needs a byte of the new one
        if seen >= want:
            return


async def fanout_rate(tmp: Path, subscribers: int, events: int) -> float:
    """Events delivered per second (summed over subscribers) for `events` durable events."""
    async with Service(tmp) as service, aiohttp.ClientSession(headers=service.headers) as http:
        sessions = service.app[ENGINE].sessions
        await sessions.publish(created(1))
        streams = [await http.get(service.url + "/api/event") for _ in range(subscribers)]
        for s in streams:
            await s.content.readline()  # the stream is open
        drafts = events_for(events, 1)
        started = time.perf_counter()
        readers = [asyncio.create_task(count_ids(s, events)) for s in streams]
        for start in range(0, events, 100):
            await sessions.publish(drafts[start : start + 100])
        await asyncio.gather(*readers)
        elapsed = time.perf_counter() - started
        for s in streams:
            s.close()
    return subscribers * events / elapsed


async def section_fanout(args: argparse.Namespace, tmp: Path) -> list[Row]:
    events = 500 if args.quick else 1500
    many, one = [], []
    for run in range(args.runs):
        many.append(await fanout_rate(tmp / f"fan50-{run}", 50, events))
        one.append(await fanout_rate(tmp / f"fan1-{run}", 1, events))
    m, o = statistics.median(many), statistics.median(one)
    return [
        (
            "SSE fan-out, 50 subscribers",
            f"{m:,.0f} ev/s delivered",
            f"{o:,.0f} ev/s (1 subscriber)",
            f"{m / o:.2f}x",
        )
    ]


async def timed(fn: Callable[[], Awaitable[object]], samples: int) -> float:
    values = []
    for _ in range(samples):
        started = time.perf_counter()
        await fn()
        values.append(time.perf_counter() - started)
    return statistics.median(values) * 1000


async def section_page(args: argparse.Namespace, tmp: Path) -> list[Row]:
    async with (
        Service(tmp / "page") as service,
        aiohttp.ClientSession(headers=service.headers) as http,
    ):
        sessions = service.app[ENGINE].sessions
        await sessions.publish(created(1))
        # 10,000 messages: prompts and assistant answers alternate.
        drafts: list[Draft] = []
        i = 0
        while len(drafts) < 10000 * 7 // 2:
            drafts += turn("ses_0", i)
            i += 1
        for start in range(0, len(drafts), 1000):
            await sessions.publish(drafts[start : start + 1000])
        store = sessions.store
        total = await store.run(
            lambda: store.connection().execute("SELECT COUNT(*) FROM message").fetchone()[0]
        )
        url = service.url + "/api/session/ses_0/message?limit=50"

        async def page() -> None:
            async with http.get(url) as r:
                await r.json()

        async def health() -> None:
            async with http.get(service.url + "/api/health") as r:
                await r.json()

        def raw() -> None:
            rows = (
                store.connection()
                .execute(
                    "SELECT data FROM message WHERE session_id = 'ses_0' ORDER BY seq DESC LIMIT 50"
                )
                .fetchall()
            )
            [json.loads(r[0]) for r in rows]

        async def raw_on_thread() -> None:
            await store.run(raw)

        samples = 30 if args.quick else 100
        await page()
        ours = await timed(page, samples)
        rt = await timed(health, samples)
        base = await timed(raw_on_thread, samples)
    return [
        (
            f"latest page of 50 ({total:,} messages)",
            f"{ours:.2f} ms",
            f"{base:.2f} ms raw SELECT, {rt:.2f} ms health",
            f"{ours / rt:.2f}x health",
        ),
    ]


async def section_replay(args: argparse.Namespace, tmp: Path) -> list[Row]:
    count = 20000 if args.quick else 100000
    sessions = 50
    source = tmp / "replay-source.db"
    store = Store(source)
    await store.open()
    bus = DurableBus(store, Fanout())
    bus.start()
    await bus.publish(created(sessions))
    drafts = events_for(count, sessions)
    for start in range(0, count, 1000):
        await bus.publish(drafts[start : start + 1000])
    events: list[Event] = await store.run(lambda: log.after(store.connection(), 0, 10**9))
    await bus.stop()
    await store.close()

    ours, raw = [], []
    for run in range(args.runs):
        target = Store(tmp / f"replay-{run}.db")
        await target.open()

        def rebuild(t: Store = target) -> float:
            started = time.perf_counter()
            replay(t, events)
            return time.perf_counter() - started

        ours.append(await target.run(rebuild))
        await target.close()
        conn = raw_connection(tmp / f"replay-raw-{run}.db")
        rows = [
            (
                e.position,
                e.id,
                e.aggregate_id,
                e.seq,
                e.type,
                e.version,
                e.created,
                e.raw,
            )
            for e in events
        ]
        started = time.perf_counter()
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO event VALUES (?,?,?,?,?,?,?,?)", rows)
        conn.execute("COMMIT")
        raw.append(time.perf_counter() - started)
        conn.close()
    o, r = statistics.median(ours), statistics.median(raw)
    return [
        (
            f"replay {len(events):,} events into an empty db",
            f"{o:.2f} s",
            f"{r:.2f} s (raw executemany)",
            f"{o / r:.1f}x the raw time",
        )
    ]


SECTIONS = {
    "append": section_append,
    "fanout": section_fanout,
    "page": section_page,
    "replay": section_replay,
}


async def run(args: argparse.Namespace) -> list[Row]:
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="desk-bench-") as tmp:
        for name, section in SECTIONS.items():
            if args.only and name not in args.only:
                continue
            path = Path(tmp) / name
            path.mkdir()
            rows += await section(args, path)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="smaller workloads, one run")
    parser.add_argument("--only", nargs="*", choices=list(SECTIONS))
    args = parser.parse_args()
    if args.quick:
        args.runs = 1
    rows = asyncio.run(run(args))
    header: Row = ("figure", "Desk", "baseline", "ratio")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(4)]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)))


if __name__ == "__main__":
    main()
