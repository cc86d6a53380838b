"""Sessions across real `desk serve` processes: SSE resume over a restart, a refused newer
database, and kill -9 in a loop while a writer appends (no seq gap, every projection
present, acknowledged events kept, integrity ok)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from desktop.config import Settings
from desktop.store.migrations import MIGRATIONS
from tests.support.service import Service, serve
from tests.support.sse import durable_events, next_event
from tests.support.wait import wait_until


def post(served: Service, path: str, body: object, timeout: float = 5) -> Any:
    request = urllib.request.Request(
        served.url + path,
        data=json.dumps(body).encode(),
        headers={**served.headers, "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read())["data"]


def prompt(sid: str, i: int) -> dict[str, object]:
    return {
        "session_id": sid,
        "type": "session.prompted",
        "data": {"message_id": f"m{i}", "text": str(i), "mode": "queue"},
    }


@pytest.mark.restart
async def test_sse_resumes_across_a_service_restart_without_gap_or_duplicate(
    settings: Settings, tmp_path: Path
) -> None:
    first = serve(settings)
    try:
        sid = post(first, "/api/session", {"directory": str(tmp_path)})["id"]
        async with aiohttp.ClientSession(headers=first.headers) as http:
            stream = await http.get(first.url + "/api/event")
            await next_event(stream)
            post(first, "/api/test/events", {"events": [prompt(sid, 1), prompt(sid, 2)]})
            seen = await durable_events(stream, 2)
            stream.close()
        missed = post(first, "/api/test/events", {"events": [prompt(sid, 3)]})
    finally:
        assert first.stop() == 0
    second = serve(settings)
    try:
        missed += post(second, "/api/test/events", {"events": [prompt(sid, 4), prompt(sid, 5)]})
        async with aiohttp.ClientSession(headers=second.headers) as http:
            stream = await http.get(
                second.url + "/api/event", headers={"Last-Event-ID": str(seen[-1].id)}
            )
            connected = await next_event(stream)
            assert connected.properties["position"] == missed[-1]["position"]
            replayed = await durable_events(stream, len(missed))
            assert [e.id for e in replayed] == [e["position"] for e in missed]
            assert [e.properties for e in replayed] == missed
            live = post(second, "/api/test/events", {"events": [prompt(sid, 6)]})
            [after] = await durable_events(stream, 1)
            assert after.id == live[0]["position"] == missed[-1]["position"] + 1
            stream.close()
    finally:
        second.stop()


def test_a_newer_database_stops_desk_serve_with_a_clear_message(settings: Settings) -> None:
    path = settings.database_path
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 5}")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    result = subprocess.run(
        [sys.executable, "-m", "desktop", "serve", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "DESK_DATA_DIR": str(settings.data_dir)},
    )
    assert result.returncode == 3
    assert "newer than this Desk" in result.stderr
    assert "Traceback" not in result.stderr
    assert path.read_bytes() == before


class Writer(threading.Thread):
    """Appends events to one service until the service dies; records what was acknowledged."""

    def __init__(self, served: Service, sessions: list[str], start: int) -> None:
        super().__init__(daemon=True)
        self.served = served
        self.sessions = sessions
        self.next = start
        self.acked: list[dict[str, Any]] = []

    def run(self) -> None:
        while True:
            i = self.next
            self.next += 1
            sid = self.sessions[i % len(self.sessions)]
            mid = f"a{i}"
            events = [
                {
                    "session_id": sid,
                    "type": "session.step.started",
                    "data": {
                        "message_id": mid,
                        "agent": "b",
                        "model": {"id": "m", "provider_id": "p"},
                    },
                },
                {
                    "session_id": sid,
                    "type": "session.text",
                    "data": {"message_id": mid, "text": "x" * 200},
                },
                {
                    "session_id": sid,
                    "type": "session.step.ended",
                    "data": {"message_id": mid, "finish": "stop"},
                },
                prompt(sid, i),
            ]
            try:
                self.acked += post(self.served, "/api/test/events", {"events": events}, timeout=10)
            except (OSError, urllib.error.URLError, json.JSONDecodeError):
                return  # the service was killed


@pytest.mark.soak
def test_kill_9_in_a_loop_while_writing_leaves_a_consistent_database(
    settings: Settings, tmp_path: Path
) -> None:
    acked: list[dict[str, Any]] = []
    sessions: list[str] = []
    counter = 0
    deadline = time.monotonic() + 90
    rounds = 0
    while rounds < 20:
        assert time.monotonic() < deadline, f"only {rounds} rounds in 90 s"
        served = serve(settings)
        sessions.append(post(served, "/api/session", {"directory": str(tmp_path)})["id"])
        writer = Writer(served, sessions, counter)
        writer.start()
        # Kill mid-stream: once this round has acknowledged a few requests.
        wait_until(lambda: len(writer.acked) >= 8 or not writer.is_alive(), timeout=20)  # noqa: B023
        served.kill()
        writer.join(timeout=20)
        assert not writer.is_alive()
        acked += writer.acked
        counter = writer.next
        rounds += 1

    conn = sqlite3.connect(settings.database_path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    # No aggregate has a gap in its seq.
    for aggregate, count, top in conn.execute(
        "SELECT aggregate_id, COUNT(*), MAX(seq) FROM event GROUP BY aggregate_id"
    ):
        assert count == top, aggregate
    # Every acknowledged event is there.
    stored = {r[0] for r in conn.execute("SELECT id FROM event")}
    assert {e["id"] for e in acked} <= stored
    # Every event's projection is present.
    messages = {r[0]: json.loads(r[1]) for r in conn.execute("SELECT id, data FROM message")}
    texts: dict[str, int] = {}
    for kind, raw in conn.execute("SELECT type, data FROM event ORDER BY position"):
        data = json.loads(raw)
        if kind == "session.text":
            texts[data["message_id"]] = texts.get(data["message_id"], 0) + 1
        if "message_id" in data:
            assert data["message_id"] in messages, (kind, data)
        if kind == "session.step.ended":
            assert "completed" in messages[data["message_id"]]["time"]
    for mid, n in texts.items():
        assert len(messages[mid]["content"]) == n
    assert len(acked) >= 20 * 4
    conn.close()
