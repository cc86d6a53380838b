"""The window's size and position, kept between runs in data_dir/window.json."""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from desktop.config import read_json_file, write_private_file
from desktop.values import strict_int

log = logging.getLogger("desk.shell.geometry")

MIN_WIDTH, MIN_HEIGHT = 480, 320
_MAX_SIDE = 16384
_MAX_OFFSET = 32768


@dataclass(frozen=True)
class Geometry:
    width: int = 1200
    height: int = 800
    x: int | None = None  # None: no saved position, see `placed_on_screen`
    y: int | None = None
    maximized: bool = False


# Room kept free around a first window: a title bar and panels the toolkit cannot see.
_SCREEN_MARGIN = 0.05
_TITLE_BAR = 32


def placed_on_screen(geometry: Geometry, screen_width: int, screen_height: int) -> Geometry:
    """A window with no saved position: shrunk to fit the screen, then centred on it.

    The toolkits' own centring (Qt: screen centre minus the client area's centre, then 16 px
    up) puts a window as tall as the screen above its top edge, header and all. Coordinates
    are relative to the screen's origin, as pywebview expects.
    """
    if geometry.x is not None or screen_width <= 0 or screen_height <= 0:
        return geometry
    margin_x = int(screen_width * _SCREEN_MARGIN)
    margin_y = int(screen_height * _SCREEN_MARGIN)
    width = max(MIN_WIDTH, min(geometry.width, screen_width - 2 * margin_x))
    height = max(MIN_HEIGHT, min(geometry.height, screen_height - 2 * margin_y - _TITLE_BAR))
    x = max(0, (screen_width - width) // 2)
    # Qt places a window's frame, title bar included, at (x, y): centre frame and content.
    y = max(0, (screen_height - height - _TITLE_BAR) // 2)
    return replace(geometry, width=width, height=height, x=x, y=y)


def _int_in(value: object, low: int, high: int) -> int | None:
    if strict_int(value) and low <= value <= high:
        return value
    return None


def load_geometry(path: Path) -> Geometry:
    """The saved geometry; defaults for what is missing or out of range (with a warning)."""
    try:
        raw = read_json_file(path)
    except (ValueError, OSError) as exc:
        log.warning("ignoring %s: %s", path, exc)
        return Geometry()
    if raw is None:
        return Geometry()
    default = Geometry()
    width = _int_in(raw.get("width"), MIN_WIDTH, _MAX_SIDE)
    height = _int_in(raw.get("height"), MIN_HEIGHT, _MAX_SIDE)
    x = _int_in(raw.get("x"), -_MAX_OFFSET, _MAX_OFFSET)
    y = _int_in(raw.get("y"), -_MAX_OFFSET, _MAX_OFFSET)
    return Geometry(
        width=width if width is not None else default.width,
        height=height if height is not None else default.height,
        # A position only makes sense as a pair.
        x=x if y is not None else None,
        y=y if x is not None else None,
        maximized=raw.get("maximized") is True,
    )


def save_geometry(path: Path, geometry: Geometry) -> None:
    write_private_file(path, json.dumps(asdict(geometry), sort_keys=True) + "\n")


class GeometryTracker:
    """Follows the window's move/resize events (they arrive on worker threads).

    Each change is also written to disk shortly after it settles, so a crash or a kill
    keeps the geometry the user last chose, not only a clean quit.
    """

    SAVE_DELAY = 0.4

    def __init__(self, initial: Geometry, path: Path | None = None) -> None:
        self._lock = threading.Lock()
        self._geometry = initial
        self._path = path
        self._timer: threading.Timer | None = None

    @property
    def geometry(self) -> Geometry:
        with self._lock:
            return self._geometry

    def _update(self, **changes: object) -> None:
        with self._lock:
            updated = replace(self._geometry, **changes)  # type: ignore[arg-type]
            if updated == self._geometry:
                return
            self._geometry = updated
            if self._path is None:
                return
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(self.SAVE_DELAY, self.save)
            self._timer.daemon = True
            self._timer.start()

    def save(self) -> None:
        if self._path is not None:
            save_geometry(self._path, self.geometry)

    def close(self) -> None:
        """Cancel a pending write and write the final geometry now."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        self.save()

    def moved(self, x: int, y: int) -> None:
        if not self.geometry.maximized:
            self._update(x=int(x), y=int(y))

    def resized(self, width: int, height: int) -> None:
        if not self.geometry.maximized:
            self._update(width=max(MIN_WIDTH, int(width)), height=max(MIN_HEIGHT, int(height)))

    def maximized(self) -> None:
        self._update(maximized=True)

    def restored(self) -> None:
        self._update(maximized=False)
