"""Fixtures shared by every suite (private temp dirs, settings, a fake UI build), the hook that
marks each browser and window test by its folder, and the hooks that start the package tests'
bundle build early (tests/support/bundle.py)."""

from __future__ import annotations

import gzip
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.config import Settings, load_settings
from tests.support.bundle import EARLY_START, BundleBuild

# The fixtures every suite may use: the in-process service (`client`, `auth`, `api`), a real
# PTY host (`host`, `start_host`), and the agent with the strict fake provider (`fake`, `agent`).
pytest_plugins = ("tests.support.host", "tests.support.app", "tests.support.agent_app")

TESTS = Path(__file__).resolve().parent
# Every test under these folders, or using these fixtures, carries the marker, whether or not
# its module says so (`make check` leaves them out by marker).
FOLDER_MARKERS = {TESTS / "browser": "browser", TESTS / "desktop": "desktop"}
BROWSER_FIXTURES = (
    "page",
    "browser",
    "browser_context",
    "persistent_context",
    "playwright_instance",
)
FIXTURE_MARKERS = {**dict.fromkeys(BROWSER_FIXTURES, "browser"), "xvfb": "desktop"}

# The session's background bundle build (tests/support/bundle.py), when package tests run.
BUNDLE_WANTED = pytest.StashKey[bool]()
BUNDLE_BUILD = pytest.StashKey[BundleBuild]()


# Every process a test starts (desk serve, the PTY host, the shells in its terminals, git) gets a
# home of its own: the machine's rc files are not the tests' business, and a slow or stuck one
# (pyenv's rehash lock, left behind by a shell killed mid-start, stalls every bash for 60 s)
# would pass for a Desk bug. xdist workers inherit the controller's.
TEST_HOME = "DESK_TEST_HOME"
GITCONFIG = "[user]\n\tname = Desk tests\n\temail = tests@desk.invalid\n"


def pytest_configure(config: pytest.Config) -> None:
    if TEST_HOME in os.environ:
        return
    home = tempfile.mkdtemp(prefix="desk-home-")
    Path(home, ".gitconfig").write_text(GITCONFIG)
    os.environ[TEST_HOME] = os.environ["HOME"] = home
    config.add_cleanup(lambda: shutil.rmtree(home, ignore_errors=True))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        wanted = {
            mark for folder, mark in FOLDER_MARKERS.items() if item.path.is_relative_to(folder)
        }
        used = getattr(item, "fixturenames", ())
        wanted |= {mark for fixture, mark in FIXTURE_MARKERS.items() if fixture in used}
        for marker in wanted:
            if item.get_closest_marker(marker) is None:
                item.add_marker(marker)


def pytest_collection_finish(session: pytest.Session) -> None:
    # Under pytest-xdist every worker collects every test and learns its share only later:
    # there the package test starts its own build, while the other worker goes on.
    distributed = hasattr(session.config, "workerinput")
    session.config.stash[BUNDLE_WANTED] = not distributed and any(
        # The tests that use the bundle (the wheel's package tests do not).
        "bundle_build" in getattr(item, "fixturenames", ())
        for item in session.items
    )


def pytest_runtest_setup(item: pytest.Item) -> None:
    config = item.config
    early = item.path.is_relative_to(EARLY_START) or item.get_closest_marker("package") is not None
    wanted = config.stash.get(BUNDLE_WANTED, False)
    if early and wanted and BUNDLE_BUILD not in config.stash:
        config.stash[BUNDLE_BUILD] = BundleBuild()


def pytest_sessionfinish(session: pytest.Session) -> None:
    build = session.config.stash.get(BUNDLE_BUILD, None)
    if build is not None:
        build.discard()


@pytest.fixture(scope="session")
def bundle_build(request: pytest.FixtureRequest) -> BundleBuild:
    """The build started early in this session (or now, if nothing started it)."""
    config = request.config
    if BUNDLE_BUILD not in config.stash:
        config.stash[BUNDLE_BUILD] = BundleBuild()
    return config.stash[BUNDLE_BUILD]


@pytest.fixture
def short_runtime_dir() -> Iterator[Path]:
    """A runtime dir with a short path: Unix socket paths are limited to ~107 bytes."""
    path = Path(tempfile.mkdtemp(prefix="desk-t-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def settings(tmp_path: Path, short_runtime_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("DESK_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DESK_RUNTIME_DIR", str(short_runtime_dir / "run"))
    loaded = load_settings()
    loaded.ensure_dirs()
    return loaded


FAKE_INDEX = (
    '<!doctype html><html><head><script type="module" src="/_assets/app-3f2a1b.js"></script>'
    '</head><body><div id="root">embedded</div></body></html>'
)


@pytest.fixture
def web_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A small build with the same layout as web/dist, served through DESK_WEB_DIST."""
    dist = tmp_path / "dist"
    (dist / "_assets").mkdir(parents=True)
    (dist / "index.html").write_text(FAKE_INDEX)
    (dist / "sw.js").write_text("self.addEventListener('fetch', () => {})")
    (dist / "_assets" / "app-3f2a1b.js").write_text("console.log('embedded')")
    (dist / "_assets" / "app-3f2a1b.js.gz").write_bytes(gzip.compress(b"console.log('embedded')"))
    (dist / "_assets" / "style-9c8d7e.css").write_text("body{margin:0}")
    (dist / "_assets" / "font-1a2b3c.woff2").write_bytes(bytes([0, 1, 2, 255]))
    (dist / "manifest.webmanifest").write_text('{"name": "Desk"}')
    (tmp_path / "secret.txt").write_text("outside the build")
    monkeypatch.setenv("DESK_WEB_DIST", str(dist))
    return dist
