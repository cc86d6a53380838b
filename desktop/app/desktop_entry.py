"""Desk's desktop entry (`desk.desktop`) and icon: the text the .deb ships and the per-user
copy `desk install-desktop-entry` writes for a wheel or source install."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from desktop.config import PACKAGE_DIR

APP_ID = "desk"  # the entry's file name, the icon's name and the window's Wayland app id
WM_CLASS = "Desk"  # the window's X11 class (Qt's application name): StartupWMClass
ICON_SVG = PACKAGE_DIR / "app" / "desk.svg"


def entry_text(exec_line: str) -> str:
    """The desktop entry that starts Desk with `exec_line` (already quoted for Exec)."""
    return "\n".join(
        [
            "[Desktop Entry]",
            "Type=Application",
            "Name=Desk",
            "GenericName=AI Coding Workbench",
            "Comment=Chat with an AI agent that codes, beside terminals that survive restarts",
            f"Exec={exec_line}",
            f"Icon={APP_ID}",
            "Terminal=false",
            "Categories=Development;IDE;",
            "Keywords=AI;agent;terminal;chat;coding;",
            f"StartupWMClass={WM_CLASS}",
            "StartupNotify=true",
            "",
        ]
    )


def exec_quote(argv: list[str]) -> str:
    """argv as an Exec value: arguments with reserved characters in double quotes."""
    reserved = set(" \t\n\"'\\><~|&;$*?#()`%")
    quoted = []
    for arg in argv:
        if arg and not reserved & set(arg):
            quoted.append(arg)
            continue
        escaped = "".join("\\" + c if c in '"`$\\' else c for c in arg).replace("%", "%%")
        quoted.append(f'"{escaped}"')
    return " ".join(quoted)


def this_installation() -> list[str]:
    """argv that starts the window of this same installation, by absolute paths (a pipx or
    venv `bin/` is seldom on the PATH a desktop session starts programs with)."""
    if getattr(sys, "frozen", False):
        return [sys.executable]
    script = Path(sys.executable).parent / "desk"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "desktop"]


@dataclass(frozen=True)
class UserEntry:
    """Where a per-user entry and icon go under one XDG data home."""

    data_home: Path

    @classmethod
    def from_environment(cls, env: Mapping[str, str] | None = None) -> UserEntry:
        env = os.environ if env is None else env
        home = env.get("XDG_DATA_HOME") or str(
            Path(env.get("HOME") or Path.home()) / ".local/share"
        )
        return cls(Path(home))

    @property
    def entry_path(self) -> Path:
        return self.data_home / "applications" / f"{APP_ID}.desktop"

    @property
    def icon_path(self) -> Path:
        return self.data_home / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg"

    def install(self, argv: list[str]) -> None:
        for path, data in (
            (self.icon_path, ICON_SVG.read_bytes()),
            (self.entry_path, entry_text(exec_quote(argv)).encode()),
        ):
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.tmp")
            tmp.write_bytes(data)
            tmp.replace(path)

    def remove(self) -> list[Path]:
        """Remove the entry and icon; returns the paths that were there."""
        removed = []
        for path in (self.entry_path, self.icon_path):
            if path.exists():
                path.unlink()
                removed.append(path)
        return removed
