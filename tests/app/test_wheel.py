"""The wheel (`make wheel`: pip wheel with setup.py's build_py) carries the built UI and the
compiled PTY module; pipx installs it offline into a private home, where `desk self-test`
passes and `desk install-desktop-entry` adds a valid entry that starts that installation.

The dependencies' wheels (and pip's, for pipx's shared venv) are kept in a wheelhouse under
~/.cache/desk-tests, downloaded once; pipx then installs with no index at all.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import time
import zipfile
from configparser import ConfigParser
from pathlib import Path

import pytest

import desktop
from tests.support.desk import PROJECT

pytestmark = [
    pytest.mark.package,
    pytest.mark.timeout(600),
]

# The wheelhouse outlives the run (and its private $HOME): in the account's real home.
CACHE = Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "desk-tests"
WHEELHOUSE = CACHE / "wheelhouse"
PIPX_TOOLS = ("pip", "setuptools", "wheel")  # what pipx puts in its shared venv
SOURCES = ("desktop", "native", "setup.py", "pyproject.toml", "README.md", "MANIFEST.in")
SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"


def pip(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of what the wheel is built from (no compiled module, no caches), so that a UI
    build running meanwhile in the checkout cannot change it under the test."""
    source = tmp_path_factory.mktemp("wheel-src")
    ignore = shutil.ignore_patterns("__pycache__", "*.so", "*.egg-info")
    for name in SOURCES:
        path = PROJECT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=ignore)
        else:
            shutil.copy2(path, source / name)
    shutil.copytree(PROJECT / "web" / "dist", source / "web" / "dist")
    return source


@pytest.fixture(scope="module")
def wheel(source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    started = time.monotonic()
    done = pip("wheel", "--no-deps", "--no-build-isolation", "--wheel-dir", str(out), str(source))
    assert done.returncode == 0, done.stdout + done.stderr
    (built,) = out.glob("desk-*.whl")
    print(f"\nwheel: built in {time.monotonic() - started:.1f}s, {built.stat().st_size >> 10} KiB")
    return built


def fill_wheelhouse(wheel: Path) -> None:
    """The wheel's dependencies and pipx's tools in WHEELHOUSE, fetched only when missing."""
    wanted = ["--dest", str(WHEELHOUSE), str(wheel), *PIPX_TOOLS]
    offline = pip("download", "--no-index", "--find-links", str(WHEELHOUSE), *wanted)
    if offline.returncode != 0:
        online = pip("download", "--only-binary=:all:", *wanted)
        assert online.returncode == 0, f"cannot fill {WHEELHOUSE}: {online.stderr[-2000:]}"
    for copy in WHEELHOUSE.glob("desk-*.whl"):
        copy.unlink()


def private_env(home: Path) -> dict[str, str]:
    """A login-like environment in `home`, with pip kept off every index."""
    return {
        "HOME": str(home),
        "PATH": SYSTEM_PATH,
        "LANG": "C.UTF-8",
        "PIPX_HOME": str(home / "pipx"),
        "PIPX_BIN_DIR": str(home / "bin"),
        # pipx's shared venv (pip) is reused across runs, like the wheelhouse.
        "PIPX_SHARED_LIBS": str(CACHE / "pipx-shared"),
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(WHEELHOUSE),
    }


@pytest.fixture(scope="module")
def pipx_home(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    WHEELHOUSE.mkdir(parents=True, exist_ok=True)
    fill_wheelhouse(wheel)
    home = tmp_path_factory.mktemp("home")
    started = time.monotonic()
    done = subprocess.run(
        ["pipx", "install", str(wheel)],
        env=private_env(home),
        cwd=home,
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    print(f"\npipx: installed offline in {time.monotonic() - started:.1f}s")
    return home


def run_in(home: Path, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        env=private_env(home),
        cwd=home,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_the_wheel_carries_the_built_ui_the_compiled_pty_module_and_the_icon(
    wheel: Path, source: Path
) -> None:
    # One wheel for CPython 3.11 and newer: the cffi module uses the stable ABI.
    assert wheel.name.startswith(f"desk-{desktop.__version__}-cp311-abi3-linux_")
    names = set(zipfile.ZipFile(wheel).namelist())
    built_ui = {
        f"desktop/web_dist/{path.relative_to(source / 'web' / 'dist')}"
        for path in (source / "web" / "dist").rglob("*")
        if path.is_file()
    }
    assert "desktop/web_dist/index.html" in built_ui
    assert built_ui <= names
    assert [name for name in names if name.endswith(".so")] == ["desktop/native/_pty.abi3.so"]
    assert "desktop/app/desk.svg" in names
    assert "desktop/py.typed" in names


def test_pipx_installs_the_wheel_offline_and_its_desk_passes_the_self_test(
    pipx_home: Path,
) -> None:
    desk = str(pipx_home / "bin" / "desk")
    version = run_in(pipx_home, desk, "--version")
    assert version.stdout.strip() == f"desk {desktop.__version__}", version.stderr
    python = str(pipx_home / "pipx" / "venvs" / "desk" / "bin" / "python")
    served = run_in(pipx_home, python, "-c", "import desktop.config as c; print(c.web_dist_dir())")
    assert Path(served.stdout.strip()).is_relative_to(pipx_home), served.stderr
    done = run_in(pipx_home, desk, "self-test")
    assert done.returncode == 0, done.stdout + done.stderr


def test_install_desktop_entry_adds_a_valid_entry_that_starts_this_installation(
    pipx_home: Path,
) -> None:
    desk = pipx_home / "bin" / "desk"
    done = run_in(pipx_home, str(desk), "install-desktop-entry")
    assert done.returncode == 0, done.stderr
    entry = pipx_home / ".local" / "share" / "applications" / "desk.desktop"
    icon = pipx_home / ".local" / "share" / "icons" / "hicolor" / "scalable" / "apps" / "desk.svg"
    assert icon.read_bytes().startswith(b"<svg")
    valid = subprocess.run(["desktop-file-validate", str(entry)], capture_output=True, text=True)
    assert valid.returncode == 0, valid.stdout + valid.stderr
    parsed = ConfigParser(interpolation=None)
    parsed.read(entry)
    command = parsed["Desktop Entry"]["Exec"]
    # The venv's own script, by its absolute path: ~/.local/bin is often not on a session's PATH.
    assert command == str(pipx_home / "pipx" / "venvs" / "desk" / "bin" / "desk")
    assert os.access(command, os.X_OK)

    removed = run_in(pipx_home, str(desk), "install-desktop-entry", "--remove")
    assert removed.returncode == 0, removed.stderr
    assert not entry.exists()
    assert not icon.exists()
