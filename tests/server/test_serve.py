"""`desk serve` as a real process: ready line, graceful SIGTERM, bad arguments."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from desktop.config import Settings
from tests.support.wait import wait_until


def start_serve(settings: Settings, *extra: str) -> tuple[subprocess.Popen[str], dict[str, object]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "desktop", "serve", "--port", "0", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "DESK_DATA_DIR": str(settings.data_dir)},
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line, proc.stderr.read() if proc.stderr else "no output"
    return proc, json.loads(line)


def test_ready_line_then_graceful_sigterm(settings: Settings) -> None:
    proc, ready = start_serve(settings)
    try:
        assert set(ready) == {"url", "token", "pid"}
        assert ready["pid"] == proc.pid
        url = str(ready["url"])
        assert url.startswith("http://127.0.0.1:")
        token = (settings.data_dir / "auth-token").read_text().strip()
        assert ready["token"] == token
        assert oct(settings.data_dir.stat().st_mode & 0o777) == "0o700"
        request = urllib.request.Request(
            url + "/api/health", headers={"Authorization": f"Bearer {token}"}
        )
        with urllib.request.urlopen(request, timeout=5) as response:
            assert json.loads(response.read())["data"]["pid"] == proc.pid

        # An open event stream must not hold the shutdown up.
        stream = urllib.request.urlopen(
            urllib.request.Request(
                url + "/api/event", headers={"Authorization": f"Bearer {token}"}
            ),
            timeout=10,
        )
        assert stream.readline().startswith(b"retry:")
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=5) == 0
        assert time.monotonic() - started < 5
        stream.close()
    finally:
        proc.kill()
        proc.wait()
    assert proc.stderr is not None
    logs = proc.stderr.read()
    assert token not in logs


def test_token_never_logged_by_login(settings: Settings) -> None:
    proc, ready = start_serve(settings)
    try:
        opener = urllib.request.build_opener()
        with opener.open(f"{ready['url']}/?token={ready['token']}", timeout=5) as response:
            assert response.status == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=5)
    assert proc.stderr is not None
    assert str(ready["token"]) not in proc.stderr.read()


def test_port_in_use_is_a_clear_error(settings: Settings, tmp_path: Path) -> None:
    proc, ready = start_serve(settings)
    try:
        port = str(ready["url"]).rsplit(":", 1)[1]
        # Another data dir: the same one would be refused before the port is tried.
        second = subprocess.run(
            [sys.executable, "-m", "desktop", "serve", "--port", port],
            capture_output=True,
            text=True,
            timeout=20,
            env={**os.environ, "DESK_DATA_DIR": str(tmp_path / "other-data")},
        )
        assert second.returncode == 2
        assert "cannot listen" in second.stderr
        assert "Traceback" not in second.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=5)


def test_in_flight_request_finishes_during_shutdown(settings: Settings) -> None:
    proc, ready = start_serve(settings)
    host, port = str(ready["url"])[len("http://") :].split(":")
    body = json.dumps({"value": "kept"}).encode()
    try:
        conn = socket.create_connection((host, int(port)), timeout=10)
        conn.sendall(
            b"PUT /api/ui/prefs/inflight HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
            + f"Authorization: Bearer {ready['token']}\r\n".encode()
            + b"Expect: 100-continue\r\n"
            + f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        )
        # "100 Continue" proves the handler is running before the service is told to stop.
        assert conn.recv(100).startswith(b"HTTP/1.1 100")
        conn.sendall(body[:5])
        proc.send_signal(signal.SIGTERM)

        def refuses_new_connections() -> bool:
            try:
                socket.create_connection((host, int(port)), timeout=1).close()
            except (ConnectionRefusedError, ConnectionResetError):
                # Reset: the kernel queued it as the listener closed; nothing served it.
                return True
            return False

        wait_until(refuses_new_connections, timeout=5)
        conn.sendall(body[5:])
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
        conn.close()
        assert answer.startswith(b"HTTP/1.1 200"), answer[:100]
        assert b'"kept"' in answer
        assert proc.wait(timeout=5) == 0
    finally:
        proc.kill()
        proc.wait()
