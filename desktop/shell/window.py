"""The desktop window: the web UI in pywebview, logged in, over the managed service.

`run` ensures the service, opens `<url>/?token=T` (the service answers 303 to `/` with an
HttpOnly cookie, so the token never stays in the URL), keeps the web storage (service worker
cache, cookie) under the data dir, and on quit stops the service and the PTY host, which
saves its terminals.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import logging
import os
import re
import signal
import sys
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any, Literal

from desktop.config import Settings, ensure_private_dir
from desktop.shell.geometry import (
    MIN_HEIGHT,
    MIN_WIDTH,
    GeometryTracker,
    load_geometry,
    save_geometry,
)
from desktop.shell.probe import WindowProbe, make_qt_gui_caller
from desktop.shell.qtcheck import missing_xcb_libraries
from desktop.shell.service import ServiceError, ensure_service, stop_service

TITLE = "Desk"
Gui = Literal["qt", "gtk"]
_TOKEN_IN_TEXT = re.compile(r"(token=)[^&\s'\"]+")


def geometry_path(settings: Settings) -> Path:
    return settings.data_dir / "window.json"


def storage_path(settings: Settings) -> Path:
    return settings.data_dir / "webview"


def run(settings: Settings) -> int:
    """Show the window until the user closes it; then stop everything. Returns an exit code."""
    settings.ensure_dirs()
    with _window_lock(settings) as owner:
        if not owner:
            print(f"desk: a Desk window is already open for {settings.data_dir}", file=sys.stderr)
            return 0
        gui, problem = choose_gui()
        if gui is None:
            print(f"desk: cannot open a window: {problem}", file=sys.stderr)
            return 1
        prepare_environment(gui)
        try:
            info = ensure_service(settings)
        except ServiceError as exc:
            print(f"desk: {exc}", file=sys.stderr)
            return 1
        try:
            return _show(settings, info, gui)
        finally:
            stop_service(settings, all=True)


@contextlib.contextmanager
def _window_lock(settings: Settings) -> Iterator[bool]:
    """One window per data dir: a second one would stop the service under the first."""
    fd = os.open(settings.runtime_dir / "window.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def choose_gui() -> tuple[Gui | None, str]:
    """("qt" or "gtk", "") when a backend can run here, else (None, what to install)."""
    qt_problem = _qt_problem()
    if qt_problem is None:
        return "qt", ""
    if importlib.util.find_spec("gi") is not None:
        return "gtk", ""
    return None, qt_problem


def _qt_problem() -> str | None:
    try:
        importlib.import_module("PyQt6.QtWebEngineWidgets")
    except ImportError:
        return "PyQt6 with QtWebEngine is missing (pip install 'pywebview[qt]')"
    if os.environ.get("QT_QPA_PLATFORM", "xcb" if os.environ.get("DISPLAY") else "") == "xcb":
        missing = missing_xcb_libraries()
        if missing:
            return "Qt's xcb plugin needs " + ", ".join(missing)
    return None


def prepare_environment(gui: Gui) -> None:
    if gui == "qt" and os.geteuid() == 0:
        # Chromium refuses to run its sandbox as root.
        flags = os.environ.get("QTWEBENGINE_CHROMIUM_FLAGS", "")
        if "--no-sandbox" not in flags.split():
            os.environ["QTWEBENGINE_CHROMIUM_FLAGS"] = f"{flags} --no-sandbox".strip()
    logging.getLogger("pywebview").addFilter(_redact_token)


def _redact_token(record: logging.LogRecord) -> bool:
    message = record.getMessage()
    if "token=" in message:
        record.msg, record.args = _TOKEN_IN_TEXT.sub(r"\1<redacted>", message), None
    return True


def login_url(info: dict[str, object]) -> str:
    token = urllib.parse.quote(str(info["token"]), safe="")
    return f"{info['url']}/?token={token}"


def _show(settings: Settings, info: dict[str, object], gui: Gui) -> int:
    import webview

    path = geometry_path(settings)
    tracker = GeometryTracker(load_geometry(path))
    initial = tracker.geometry
    window: Any = webview.create_window(
        TITLE,
        url=login_url(info),
        width=initial.width,
        height=initial.height,
        x=initial.x,
        y=initial.y,
        maximized=initial.maximized,
        min_size=(MIN_WIDTH, MIN_HEIGHT),
    )
    window.events.moved += tracker.moved
    window.events.resized += tracker.resized
    window.events.maximized += tracker.maximized
    window.events.restored += tracker.restored
    probe = WindowProbe.from_environment(
        gui_caller=make_qt_gui_caller() if gui == "qt" else None, service_pid=info["pid"]
    )

    def close_on_signal(signum: int, frame: FrameType | None) -> None:
        # destroy() waits until the window is shown: never block the GUI thread on it.
        threading.Thread(target=window.destroy, daemon=True).start()

    previous = signal.signal(signal.SIGTERM, close_on_signal)
    try:
        webview.start(
            probe.run if probe else None,
            (window,) if probe else None,
            gui=gui,
            private_mode=False,
            storage_path=str(ensure_private_dir(storage_path(settings))),
        )
    finally:
        signal.signal(signal.SIGTERM, previous)
        save_geometry(path, tracker.geometry)
    return 0
