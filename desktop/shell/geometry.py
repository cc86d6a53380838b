"""The window's size and position, kept between runs in data_dir/window.json."""

from __future__ import annotations

import json
import sys
import threading
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from desktop.config import read_json_file, write_private_file

MIN_WIDTH, MIN_HEIGHT = 480, 320
_MAX_SIDE = 16384
_MAX_OFFSET = 32768


@dataclass(frozen=True)
class Geometry:
    width: int = 1200
    height: int = 800
    x: int | None = None  # None: let the toolkit centre the window
    y: int | None = None
    maximized: bool = False


def _int_in(value: object, low: int, high: int) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
        return value
    return None


def load_geometry(path: Path) -> Geometry:
    """The saved geometry; defaults for what is missing or out of range (with a warning)."""
    try:
        raw = read_json_file(path)
    except (ValueError, OSError) as exc:
        print(f"desk: warning: ignoring {path}: {exc}", file=sys.stderr)
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
    """Follows the window's move/resize events (they arrive on worker threads)."""

    def __init__(self, initial: Geometry) -> None:
        self._lock = threading.Lock()
        self._geometry = initial

    @property
    def geometry(self) -> Geometry:
        with self._lock:
            return self._geometry

    def moved(self, x: int, y: int) -> None:
        with self._lock:
            if not self._geometry.maximized:
                self._geometry = replace(self._geometry, x=int(x), y=int(y))

    def resized(self, width: int, height: int) -> None:
        with self._lock:
            if not self._geometry.maximized:
                self._geometry = replace(
                    self._geometry,
                    width=max(MIN_WIDTH, int(width)),
                    height=max(MIN_HEIGHT, int(height)),
                )

    def maximized(self) -> None:
        with self._lock:
            self._geometry = replace(self._geometry, maximized=True)

    def restored(self) -> None:
        with self._lock:
            self._geometry = replace(self._geometry, maximized=False)
