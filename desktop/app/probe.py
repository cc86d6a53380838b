"""A test and benchmark hook for the window: with `DESK_WINDOW_PROBE=<path>`, what the page
reports, written as JSON, and a screenshot beside it.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop.config import write_private_file
from desktop.process.liveness import process_start_epoch

GuiCaller = Callable[[Callable[[], None]], None]

# The UI's CSP forbids eval (pywebview's evaluate_js): scripts go through run_js
# (QtWebEngine's runJavaScript) and return JSON text.
# Evaluated repeatedly; installs its own small state on the first call (and after a reload).
STATE_SCRIPT = """
(function () {
  var probe = window.__deskProbe;
  if (!probe) {
    probe = window.__deskProbe = {swReady: false, painted: false};
    if (navigator.serviceWorker) {
      navigator.serviceWorker.ready.then(function () { probe.swReady = true; });
    }
  }
  var state = null;
  try {
    if (window.__desk && typeof window.__desk.state === 'function') {
      state = JSON.parse(JSON.stringify(window.__desk.state()));
    }
  } catch (e) { state = null; }
  var paint = performance.getEntriesByName('first-contentful-paint')[0] ||
    performance.getEntriesByName('first-paint')[0];
  return JSON.stringify({
    has_state: state !== null,
    state: state,
    // `connected: true`, or the UI's connection state machine in state "connected".
    connected: !!(state && (state.connected === true || state.connection === 'connected')),
    controlled: !!(navigator.serviceWorker && navigator.serviceWorker.controller),
    sw_ready: probe.swReady,
    time_origin: performance.timeOrigin,
    first_paint: paint ? paint.startTime : null,
    origin: location.origin,
    path: location.pathname,
    token_in_url: location.href.indexOf('token=') >= 0,
    // The window's folder bridge reached the page and can carry a request: the page owns
    // that rule (web/src/chat/folder.js, desktop/app/folder_bridge.py).
    folder_dialog: !!(state && state.folderDialog === true),
    title: document.title
  });
})()
"""

# Two animation frames after the connected state is set, it is on screen.
PAINT_SCRIPT = """
(function () {
  var probe = window.__deskProbe;
  probe.painted = false;
  requestAnimationFrame(function () {
    requestAnimationFrame(function () { probe.painted = true; });
  });
  return 'true';
})()
"""
# Opens the new-session dialog and presses Browse… once it is there; true once pressed.
OPEN_BROWSE_SCRIPT = """
(function () {
  var browse = Array.prototype.find.call(document.querySelectorAll('.new-session-dialog button'),
    function (b) { return b.textContent.indexOf('Browse') === 0; });
  if (browse) { browse.click(); return 'true'; }
  var open = document.getElementById('new-session');
  if (open && !document.querySelector('.new-session-dialog')) open.click();
  return 'false';
})()
"""
FOLDER_FIELD_SCRIPT = (
    "JSON.stringify((document.getElementById('new-session-folder') || {}).value || '')"
)
PAINTED_SCRIPT = "JSON.stringify(!!(window.__deskProbe && window.__deskProbe.painted))"


def make_qt_gui_caller() -> GuiCaller:
    """Run a function on Qt's GUI thread from any thread. Create it on the main thread."""
    from PyQt6.QtCore import QObject, pyqtSignal, pyqtSlot

    class _Caller(QObject):
        requested = pyqtSignal(object)

        def __init__(self) -> None:
            super().__init__()
            self.requested.connect(self._run)

        @pyqtSlot(object)
        def _run(self, function: Callable[[], None]) -> None:
            function()

    caller = _Caller()

    def call(function: Callable[[], None]) -> None:
        # Holding `caller` here keeps the QObject alive: a bare bound signal would not.
        caller.requested.emit(function)

    return call


class WindowProbe:
    def __init__(
        self,
        path: Path,
        *,
        autoclose: bool,
        timeout: float,
        gui_caller: GuiCaller | None,
        pick_folder: bool = False,
    ) -> None:
        self.path = path
        self.pick_folder = pick_folder
        self.autoclose = autoclose
        self.timeout = timeout
        self.gui_caller = gui_caller

    @classmethod
    def from_environment(cls, *, gui_caller: GuiCaller | None) -> WindowProbe | None:
        raw = os.environ.get("DESK_WINDOW_PROBE")
        if not raw:
            return None
        timeout = float(os.environ.get("DESK_WINDOW_PROBE_TIMEOUT") or 30.0)
        return cls(
            Path(raw),
            autoclose=os.environ.get("DESK_WINDOW_AUTOCLOSE") == "1",
            timeout=timeout,
            gui_caller=gui_caller,
            pick_folder=os.environ.get("DESK_WINDOW_PROBE_FOLDER") == "1",
        )

    @property
    def screenshot_path(self) -> Path:
        return self.path.with_name(self.path.name + ".png")

    def run(self, window: Any, *, service_pid: object) -> None:
        """Runs on a pywebview worker thread once the UI's URL is loading."""
        started = time.monotonic()
        report: dict[str, object] = {"pid": os.getpid(), "service_pid": service_pid}
        errors: list[str] = []
        try:
            report.update(self._observe(window, started, errors))
            if self.pick_folder:
                report["folder_picked"] = self._pick_folder(window, started, errors)
            report["screenshot"] = self._screenshot(window, report, errors)
        except Exception as exc:  # the report must be written whatever happened
            errors.append(f"{type(exc).__name__}: {exc}")
        report["errors"] = errors
        report["probe_ms"] = round((time.monotonic() - started) * 1000, 1)
        write_private_file(self.path, json.dumps(report, sort_keys=True) + "\n")
        if self.autoclose:
            window.destroy()

    def _observe(self, window: Any, started: float, errors: list[str]) -> dict[str, object]:
        deadline = started + self.timeout
        if not window.events.loaded.wait(self.timeout):
            errors.append("the page did not load")
            return {"connected": False, "controlled": False, "timed_out": True}
        loaded_ms = (time.time() - process_start_epoch()) * 1000
        state: dict[str, Any] = {}
        while True:
            value = _run_json(window, STATE_SCRIPT)
            state = value if isinstance(value, dict) else {}
            # Offline-ready: the worker is registered, controls the page and holds the shell, so
            # a window closed now leaves the next start a worker to open with. UIs without the
            # flag count a ready worker.
            offline = (state.get("state") or {}).get("offlineReady")
            ready = offline if offline is not None else state.get("sw_ready")
            painted = state.get("first_paint") is not None
            # The terminal list has loaded (UIs without that flag count as loaded).
            listed = (state.get("state") or {}).get("loaded") is not False
            bridged = state.get("folder_dialog")
            if state.get("connected") and ready and painted and listed and bridged:
                break
            if time.monotonic() > deadline:
                errors.append(
                    "timed out waiting for connected, an offline-ready service worker,"
                    " the terminal list, the folder bridge and a first paint"
                )
                break
            time.sleep(0.05)
        timed_out = bool(errors)
        if state.get("connected"):
            _run_json(window, PAINT_SCRIPT)
            while not _run_json(window, PAINTED_SCRIPT) and time.monotonic() < deadline:
                time.sleep(0.02)
        return {
            **{key: state.get(key) for key in _REPORTED},
            "connected": bool(state.get("connected")),
            "controlled": bool(state.get("controlled")),
            # The worker served the page's own navigation (not only claimed it afterwards).
            "controlled_at_load": bool((state.get("state") or {}).get("controlledAtLoad")),
            "offline_ready": bool((state.get("state") or {}).get("offlineReady")),
            "sw_ready": bool(state.get("sw_ready")),
            "timed_out": timed_out,
            "loaded_ms": round(loaded_ms, 1),
            **_first_paint(state),
        }

    def _pick_folder(self, window: Any, started: float, errors: list[str]) -> str | None:
        """Asks for a folder as a person does (New session, then Browse…) and returns what the
        folder field holds once the native dialog is answered (the test answers it)."""
        deadline = started + self.timeout
        while not _run_json(window, OPEN_BROWSE_SCRIPT):
            if time.monotonic() > deadline:
                errors.append("the new-session dialog offered no Browse… button")
                return None
            time.sleep(0.05)
        while True:
            value = _run_json(window, FOLDER_FIELD_SCRIPT)
            if value:
                return str(value)
            if time.monotonic() > deadline:
                errors.append("the folder field was never filled")
                return None
            time.sleep(0.05)

    def _screenshot(self, window: Any, report: dict[str, object], errors: list[str]) -> str | None:
        if self.gui_caller is None:
            errors.append("screenshots need the Qt backend")
            return None
        done = threading.Event()
        saved: list[bool] = []
        target = self.screenshot_path
        geometry: dict[str, int] = {}
        report["window"] = geometry

        def grab() -> None:
            try:
                native = window.native
                geometry.update(
                    x=native.x(), y=native.y(), width=native.width(), height=native.height()
                )
                report["window_title"] = native.windowTitle()
                saved.append(bool(native.grab().save(str(target), "PNG")))
            finally:
                done.set()

        self.gui_caller(grab)
        if not done.wait(10.0) or not saved or not saved[0]:
            errors.append("the screenshot could not be taken")
            return None
        target.chmod(0o600)
        return str(target)


def _run_json(window: Any, script: str) -> Any:
    raw = window.run_js(script)
    return json.loads(raw) if isinstance(raw, str) else None


_REPORTED = ("has_state", "state", "origin", "path", "token_in_url", "title", "folder_dialog")


def _first_paint(state: dict[str, Any]) -> dict[str, object]:
    origin, paint = state.get("time_origin"), state.get("first_paint")
    if not isinstance(origin, int | float) or not isinstance(paint, int | float):
        return {"first_paint_ms": None, "first_paint_epoch_ms": None}
    epoch_ms = float(origin) + float(paint)
    return {
        "first_paint_epoch_ms": round(epoch_ms, 1),
        "first_paint_ms": round(epoch_ms - process_start_epoch() * 1000, 1),
        "process_start_epoch_ms": round(process_start_epoch() * 1000, 1),
    }
