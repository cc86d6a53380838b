"""A running PyInstaller bundle keeps reading its own code after an upgrade replaced its files:
its module archives are pinned, at start, to the files it started from.
"""

from __future__ import annotations

import os
import sys
import zipimport
from typing import Any

PINNED_PREFIX = "/proc/self/fd/"


def _pin(path: str) -> str:
    if path.startswith(PINNED_PREFIX):
        return path
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)  # held for the process's life
    return f"{PINNED_PREFIX}{fd}"


def pin_bundle_files() -> list[str]:
    """Pin this bundle's module archives; returns the paths pinned (none outside a bundle)."""
    if not getattr(sys, "frozen", False) or not os.path.isdir(PINNED_PREFIX):
        return []
    pinned = []
    archive: Any = getattr(sys.modules.get("pyimod02_importers"), "pyz_archive", None)
    path = getattr(archive, "_filename", None)
    if isinstance(path, str) and os.path.isfile(path):
        archive._filename = _pin(path)
        pinned.append(path)
    bundle = str(getattr(sys, "_MEIPASS", ""))
    for importer in list(sys.path_importer_cache.values()):
        if (
            isinstance(importer, zipimport.zipimporter)
            and bundle
            and importer.archive.startswith(bundle + os.sep)
            and os.path.isfile(importer.archive)
        ):
            pinned.append(importer.archive)
            importer.archive = _pin(importer.archive)
    return pinned
