"""`desk install-desktop-entry` writes a valid per-user entry and icon that start this same
installation, and `--remove` takes them away; `desk --version` names the package's version."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from configparser import ConfigParser
from pathlib import Path

import pytest

import desktop
from desktop.app.desktop_entry import WM_CLASS, entry_text, exec_quote
from tests.support.desk import Desk


def test_desk_version_prints_the_packages_version(desk: Desk) -> None:
    done = desk.run("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"desk {desktop.__version__}\n"


def test_install_desktop_entry_writes_an_entry_and_icon_that_start_this_desk(
    desk: Desk, tmp_path: Path
) -> None:
    data_home = tmp_path / "share"
    desk.env["XDG_DATA_HOME"] = str(data_home)
    done = desk.run("install-desktop-entry")
    assert done.returncode == 0, done.stderr
    entry = data_home / "applications" / "desk.desktop"
    icon = data_home / "icons" / "hicolor" / "scalable" / "apps" / "desk.svg"
    assert icon.read_bytes() == (Path(desktop.__file__).parent / "app" / "desk.svg").read_bytes()
    parsed = ConfigParser(interpolation=None)
    parsed.read(entry)
    fields = parsed["Desktop Entry"]
    assert fields["StartupWMClass"] == WM_CLASS
    assert fields["Icon"] == "desk"
    command = shlex.split(fields["Exec"])
    version = subprocess.run([*command, "--version"], capture_output=True, text=True, check=False)
    assert version.stdout.strip() == f"desk {desktop.__version__}", version.stderr
    if shutil.which("desktop-file-validate"):
        valid = subprocess.run(["desktop-file-validate", str(entry)], capture_output=True)
        assert valid.returncode == 0, valid.stdout

    removed = desk.run("install-desktop-entry", "--remove")
    assert removed.returncode == 0, removed.stderr
    assert not entry.exists()
    assert not icon.exists()
    again = desk.run("install-desktop-entry", "--remove")
    assert again.stdout.strip() == "no desktop entry to remove"


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["/usr/bin/desk"], "/usr/bin/desk"),
        (
            ["/home/a b/.venv/bin/python", "-m", "desktop"],
            '"/home/a b/.venv/bin/python" -m desktop',
        ),
        (['/opt/it\'s "$x"/desk'], '"/opt/it\'s \\"\\$x\\"/desk"'),
        (["/opt/100%/desk"], '"/opt/100%%/desk"'),
    ],
)
def test_exec_lines_quote_what_the_desktop_entry_spec_reserves(argv: list[str], line: str) -> None:
    assert exec_quote(argv) == line
    assert f"\nExec={line}\n" in entry_text(line)
