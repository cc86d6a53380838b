"""Name the system package behind a missing Qt xcb library, before Qt aborts on it."""

from __future__ import annotations

import subprocess
from pathlib import Path

# Debian package for each library the xcb platform plugin commonly lacks on a bare system.
DEBIAN_PACKAGES = {
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxcb-xinerama.so.0": "libxcb-xinerama0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libGL.so.1": "libgl1",
    "libEGL.so.1": "libegl1",
    "libfontconfig.so.1": "libfontconfig1",
    "libdbus-1.so.3": "libdbus-1-3",
}


def xcb_plugin_path() -> Path:
    from PyQt6.QtCore import QLibraryInfo

    plugins = QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath)
    return Path(plugins) / "platforms" / "libqxcb.so"


def missing_xcb_libraries() -> list[str]:
    """Each library the xcb plugin cannot load, as 'libfoo.so.N (apt-get install pkg)'."""
    plugin = xcb_plugin_path()
    if not plugin.is_file():
        return [f"{plugin} (reinstall PyQt6)"]
    try:
        listing = subprocess.run(
            ["ldd", str(plugin)], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []  # without ldd, let Qt report it
    missing = []
    for line in listing.splitlines():
        if "not found" in line:
            name = line.split("=>", 1)[0].strip()
            package = DEBIAN_PACKAGES.get(name)
            missing.append(f"{name} (apt-get install {package})" if package else name)
    return missing
