"""`build.spec` makes a one-folder bundle whose `Desk self-test` passes and whose window works
and that tells its version."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

import desktop
from tests.support.bundle import bundle_env
from tests.support.desk import Desk
from tests.support.wait import wait_until
from tests.support.xvfb import start_xvfb, stop_xvfb

pytestmark = [pytest.mark.package, pytest.mark.timeout(900)]


def test_the_bundle_holds_an_executable_the_ui_build_the_native_module_and_qt(bundle: Path) -> None:
    executable = bundle / "Desk"
    assert executable.is_file()
    assert os.access(executable, os.X_OK)
    internal = bundle / "_internal"
    assert (internal / "desktop" / "web_dist" / "index.html").is_file()
    assert (internal / "desktop" / "web_dist" / "sw.js").is_file()
    web = internal / "desktop" / "web_dist"
    named = re.findall(r"/_assets/([\w.-]+)", (web / "index.html").read_text())
    assert named
    assert all((web / "_assets" / name).is_file() for name in named)
    assert list((internal / "desktop" / "native").glob("_pty*.so"))
    qt = internal / "PyQt6" / "Qt6"
    assert (qt / "libexec" / "QtWebEngineProcess").is_file()
    assert (qt / "plugins" / "platforms" / "libqxcb.so").is_file()
    assert not (qt / "qml").exists(), "QML modules are not needed"
    locales = sorted(path.name for path in (qt / "translations").rglob("*") if path.is_file())
    assert locales == ["en-US.pak"]
    libraries = {path.name for path in (qt / "lib").iterdir()}
    for unused in ("Designer", "Multimedia", "Quick3D", "Pdf", "QuickControls2", "Charts"):
        assert not any(f"Qt6{unused}" in name for name in libraries), unused
    dangling = [path for path in bundle.rglob("*") if path.is_symlink() and not path.exists()]
    assert dangling == []


def test_the_bundle_passes_its_own_self_test(bundle: Path, desk: Desk, tmp_path: Path) -> None:
    done = subprocess.run(
        [str(bundle / "Desk"), "self-test"],
        env=bundle_env(desk),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_bundle_tells_the_packages_version(bundle: Path, desk: Desk) -> None:
    done = subprocess.run(
        [str(bundle / "Desk"), "--version"],
        env=bundle_env(desk),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"desk {desktop.__version__}"


def test_bundle_opens_the_window(bundle: Path, desk: Desk, tmp_path: Path) -> None:
    display = start_xvfb()
    probe = tmp_path / "probe.json"
    env = {
        **bundle_env(desk),
        "DISPLAY": display.name,
        "QT_QPA_PLATFORM": "xcb",
        "DESK_WINDOW_PROBE": str(probe),
        "DESK_WINDOW_AUTOCLOSE": "1",
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }
    try:
        done = subprocess.run(
            [str(bundle / "Desk")],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        stop_xvfb(display)
    assert done.returncode == 0, done.stderr
    report = json.loads(probe.read_text())
    assert report["errors"] == [], report
    assert report["connected"] is True
    wait_until(lambda: not desk.leftovers(), timeout=15)
