"""The desktop window: the web UI in pywebview, logged in, over the managed service, which it
stops (with the PTY host) on quit.
"""

from __future__ import annotations

import contextlib
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

from desktop.app.desktop_entry import APP_ID, WM_CLASS
from desktop.app.folder_bridge import FolderBridge
from desktop.app.geometry import (
    MIN_HEIGHT,
    MIN_WIDTH,
    Geometry,
    GeometryTracker,
    load_geometry,
    placed_on_screen,
)
from desktop.app.probe import WindowProbe, make_qt_gui_caller
from desktop.app.qtcheck import missing_xcb_libraries
from desktop.app.service import ServiceError, ensure_service, stop_service
from desktop.config import Settings, ensure_private_dir, web_dist_dir
from desktop.process.lock import FileLock

TITLE = "Desk"
Gui = Literal["qt", "gtk"]
_TOKEN_IN_TEXT = re.compile(r"(token=)[^&\s'\"]+")


def geometry_path(settings: Settings) -> Path:
    return settings.data_dir / "window.json"


def storage_path(settings: Settings) -> Path:
    return settings.data_dir / "webview"


# pywebview's injected customize.js writes a <style> through innerHTML when text_select is
# False (its default), which the page's Trusted Types refuse: an uncaught error at every
# start. With True it injects nothing there; the UI's own CSS decides what is selectable.
TEXT_SELECT = True


def run(settings: Settings) -> int:
    """Show the window until the user closes it; then stop everything. Returns an exit code."""
    settings.ensure_dirs()
    with _window_lock(settings) as owner:
        if not owner:
            print(f"desk: a Desk window is already open for {settings.data_dir}", file=sys.stderr)
            return 0
        # The service starts while Qt and the web engine start: neither waits for the other.
        starter = ServiceStarter(settings)
        starter.start()
        try:
            gui, problem = choose_gui()
            if gui is None:
                print(f"desk: cannot open a window: {problem}", file=sys.stderr)
                return 1
            prepare_environment(gui)
            return _show(settings, starter, gui)
        finally:
            starter.join()
            stop_service(settings, with_pty_host=True)


class ServiceStarter:
    """ensure_service on a thread; the window loads the UI once it is ready."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._thread = threading.Thread(target=self._run, name="desk-service-start", daemon=True)
        self.info: dict[str, object] | None = None
        self.error: Exception | None = None

    def start(self) -> None:
        self._thread.start()

    def join(self) -> None:
        self._thread.join()

    def wait(self) -> dict[str, object] | None:
        """The service's registration, or None (the error is printed) when it cannot start."""
        self._thread.join()
        if self.error is not None:
            print(f"desk: {self.error}", file=sys.stderr)
        return self.info

    def _run(self) -> None:
        try:
            self.info = ensure_service(self._settings)
        except (ServiceError, OSError, ValueError) as exc:
            self.error = exc


@contextlib.contextmanager
def _window_lock(settings: Settings) -> Iterator[bool]:
    """One window per data dir: a second one would stop the service under the first."""
    lock = FileLock(settings.runtime_dir / "window.lock")
    try:
        yield lock.try_acquire()
    finally:
        lock.release()


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
    if _qt_platform() == "xcb":
        missing = missing_xcb_libraries()
        if missing:
            return "Qt's xcb plugin needs " + ", ".join(missing)
    return None


def _qt_platform() -> str:
    """The platform plugin Qt will pick: the X11 one unless Wayland (or an override) is set."""
    chosen = os.environ.get("QT_QPA_PLATFORM")
    if chosen:
        return chosen.split(":", 1)[0].split(";", 1)[0]
    if os.environ.get("WAYLAND_DISPLAY"):
        return "wayland"
    return "xcb" if os.environ.get("DISPLAY") else ""


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


# Shown until the service is ready; follows the system's light or dark scheme like the UI.
STARTING_PAGE = '<!doctype html><meta name="color-scheme" content="light dark"><title>Desk</title>'


def choose_folder(window: Any, start: str | None) -> str | None:
    """The folder the user chose in the native dialog, or None when cancelled."""
    import webview

    directory = start if start is not None and os.path.isdir(start) else ""
    chosen = window.create_file_dialog(webview.FileDialog.FOLDER, directory=directory)
    if not chosen:
        return None
    first = chosen[0] if isinstance(chosen, list | tuple) else chosen
    return str(first) if first else None


def _show(settings: Settings, starter: ServiceStarter, gui: Gui) -> int:
    import webview

    path = geometry_path(settings)
    saved = load_geometry(path)
    tracker = GeometryTracker(saved, path)
    web_storage = str(ensure_private_dir(storage_path(settings)))
    # pywebview's Qt backend reads the storage path once, when its module is imported, and
    # _first_placement imports it (to measure the screen) before webview.start() could set it:
    # without this a first run kept its web storage (service worker, local storage) in
    # ~/.pywebview, and the next start began without it.
    webview._state["storage_path"] = web_storage
    webview._state["private_mode"] = False
    initial = _first_placement(saved, gui)
    window: Any = webview.create_window(
        TITLE,
        html=STARTING_PAGE,
        width=initial.width,
        height=initial.height,
        x=initial.x,
        y=initial.y,
        maximized=initial.maximized,
        min_size=(MIN_WIDTH, MIN_HEIGHT),
        text_select=TEXT_SELECT,
    )
    # No js_api: pywebview's bridge needs eval, which the UI's CSP refuses (folder_bridge.py).
    FolderBridge(window.state, lambda start: choose_folder(window, start)).attach()
    window.events.moved += tracker.moved
    window.events.resized += tracker.resized
    window.events.maximized += tracker.maximized
    window.events.restored += tracker.restored
    if gui == "qt":
        _name_qt_application()
    probe = WindowProbe.from_environment(gui_caller=make_qt_gui_caller() if gui == "qt" else None)
    title_caller = make_qt_gui_caller() if gui == "qt" else None
    failed = threading.Event()

    def open_ui() -> None:
        # Runs on a pywebview worker thread once the GUI loop is up.
        info = starter.wait()
        if info is None:
            failed.set()
            window.destroy()
            return
        if title_caller is not None:
            title_caller(lambda: _follow_page_title(window))
        window.load_url(login_url(info))
        if probe is not None:
            probe.run(window, service_pid=info["pid"])

    def close_on_signal(signum: int, frame: FrameType | None) -> None:
        # destroy() waits until the window is shown: never block the GUI thread on it.
        threading.Thread(target=window.destroy, daemon=True).start()

    previous = signal.signal(signal.SIGTERM, close_on_signal)
    try:
        webview.start(
            open_ui,
            gui=gui,
            private_mode=False,
            storage_path=web_storage,
            icon=_icon(),
        )
    finally:
        signal.signal(signal.SIGTERM, previous)
        tracker.close()
        if gui == "qt":
            _delete_pending_qt_objects()
    return 1 if failed.is_set() else 0


def _first_placement(saved: Geometry, gui: Gui) -> Geometry:
    """Where a window with no saved position opens: fitted to the primary screen, centred."""
    if saved.x is not None or saved.maximized or gui != "qt":
        return saved
    # The module pywebview itself starts with; importing it first sets up QtWebEngine
    # before the QApplication it creates here (and reuses for the window).
    from webview.platforms import qt

    screens = qt.get_screens()  # type: ignore[no-untyped-call]
    if not screens:
        return saved
    return placed_on_screen(saved, int(screens[0].width), int(screens[0].height))


def _follow_page_title(window: Any) -> None:
    """The window's title follows the page's (`<tab title> — Desk`), as a browser tab's does.

    pywebview sets a title once; Qt's view announces every change of the page's title.
    Runs on the GUI thread: Qt objects are not to be touched from pywebview's workers.
    """
    native = window.native
    native.webview.titleChanged.connect(native.setWindowTitle)


def _name_qt_application() -> None:
    # Qt names its cache directory (~/.cache/<name>/QtWebEngine) and the window's X11 class
    # after the application: one name whether Desk runs as `desk`, `python -m desktop` or the
    # bundle, and the one the desktop entry's StartupWMClass gives; on Wayland the entry's
    # name is the window's app id. Both let the dock group the window with its entry.
    from PyQt6.QtCore import QCoreApplication
    from PyQt6.QtGui import QGuiApplication

    QCoreApplication.setApplicationName(WM_CLASS)
    QGuiApplication.setDesktopFileName(APP_ID)


def _icon() -> str | None:
    icon = web_dist_dir() / "icon-512.png"
    return str(icon) if icon.is_file() else None


def _delete_pending_qt_objects() -> None:
    """Delete the closed page before its profile goes away with the interpreter.

    pywebview schedules the page's deletion, but its event loop has already stopped; a profile
    released before its page makes QtWebEngine warn and risks a crash on exit.
    """
    from PyQt6.QtCore import QCoreApplication, QEvent

    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)
