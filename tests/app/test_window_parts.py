"""The window's pieces that need no display: geometry file, login URL, log redaction, Qt checks."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest

from desktop.app import qtcheck, window
from desktop.app.geometry import (
    Geometry,
    GeometryTracker,
    load_geometry,
    placed_on_screen,
    save_geometry,
)


def test_saved_geometry_is_private_and_reads_back_the_same(tmp_path: Path) -> None:
    path = tmp_path / "window.json"
    save_geometry(path, Geometry(width=900, height=640, x=10, y=-20, maximized=False))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_geometry(path) == Geometry(width=900, height=640, x=10, y=-20)


def test_missing_geometry_is_the_default(tmp_path: Path) -> None:
    assert load_geometry(tmp_path / "absent.json") == Geometry()


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{broken", Geometry()),
        ("[1, 2]", Geometry()),
        ('{"width": "wide", "height": 1000000000}', Geometry()),
        ('{"width": 50, "height": 700}', Geometry(height=700)),
        ('{"width": 800, "height": 600, "x": 5}', Geometry(width=800, height=600)),
        ('{"width": true, "height": 600, "x": 1, "y": 2}', Geometry(height=600, x=1, y=2)),
        ('{"x": 99999999, "y": 0, "maximized": "yes"}', Geometry()),
        ('{"maximized": true}', Geometry(maximized=True)),
    ],
)
def test_bad_geometry_falls_back_field_by_field(
    tmp_path: Path, content: str, expected: Geometry, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "window.json"
    path.write_text(content)
    assert load_geometry(path) == expected
    if content.startswith(("{broken", "[")):
        assert "WARNING" in caplog.text


def test_tracker_follows_moves_and_resizes_but_not_while_maximized() -> None:
    tracker = GeometryTracker(Geometry())
    tracker.moved(30, 40)
    tracker.resized(1000, 700)
    tracker.resized(10, 10)  # below the minimum: clamped
    assert tracker.geometry == Geometry(width=480, height=320, x=30, y=40)
    tracker.resized(1000, 700)
    tracker.maximized()
    tracker.resized(1280, 800)
    tracker.moved(0, 0)
    assert tracker.geometry == Geometry(width=1000, height=700, x=30, y=40, maximized=True)
    tracker.restored()
    assert tracker.geometry.maximized is False


def test_login_url_quotes_the_token() -> None:
    url = window.login_url({"url": "http://127.0.0.1:5", "token": "a/b+c"})
    assert url == "http://127.0.0.1:5/?token=a%2Fb%2Bc"


def test_pywebview_log_never_shows_the_token(caplog: pytest.LogCaptureFixture) -> None:
    window.prepare_environment("gtk")
    logger = logging.getLogger("pywebview")
    with caplog.at_level(logging.DEBUG, logger="pywebview"):
        logger.debug("Loading URL: %s", "http://127.0.0.1:5/?token=s3cret&x=1")
    assert "s3cret" not in caplog.text
    assert "token=<redacted>&x=1" in caplog.text


def test_root_gets_no_sandbox_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setenv("QTWEBENGINE_CHROMIUM_FLAGS", "--disable-gpu")
    window.prepare_environment("qt")
    window.prepare_environment("qt")
    assert os.environ["QTWEBENGINE_CHROMIUM_FLAGS"] == "--disable-gpu --no-sandbox"


def test_non_root_keeps_the_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.delenv("QTWEBENGINE_CHROMIUM_FLAGS", raising=False)
    window.prepare_environment("qt")
    assert "QTWEBENGINE_CHROMIUM_FLAGS" not in os.environ


def test_xcb_libraries_are_all_present_here() -> None:
    assert qtcheck.xcb_plugin_path().is_file()
    assert qtcheck.missing_xcb_libraries() == []


def test_missing_xcb_library_names_its_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A stand-in for ldd that reports what a bare system reports.
    fake_ldd = tmp_path / "ldd"
    fake_ldd.write_text(
        "#!/bin/sh\n"
        "echo '\tlibxcb-cursor.so.0 => not found'\n"
        "echo '\tlibfoo.so.9 => not found'\n"
        "echo '\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x0)'\n"
    )
    fake_ldd.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    assert qtcheck.missing_xcb_libraries() == [
        "libxcb-cursor.so.0 (apt-get install libxcb-cursor0)",
        "libfoo.so.9",
    ]


def test_a_first_window_fits_a_small_screen_and_is_centred() -> None:
    placed = placed_on_screen(Geometry(), 1280, 800)
    assert placed.x is not None
    assert placed.y is not None
    assert placed.y >= 0
    assert placed.x >= 0
    assert placed.y + placed.height <= 800
    assert abs(placed.x - (1280 - placed.x - placed.width)) <= 1, "centred horizontally"
    assert placed.height < Geometry().height, "the default 800 px would not fit with a title bar"


def test_a_first_window_keeps_its_default_size_on_a_large_screen() -> None:
    placed = placed_on_screen(Geometry(), 2560, 1440)
    assert (placed.width, placed.height) == (Geometry().width, Geometry().height)
    assert placed.x == (2560 - placed.width) // 2


def test_a_saved_position_is_never_moved() -> None:
    saved = Geometry(width=900, height=640, x=-200, y=5)
    assert placed_on_screen(saved, 1280, 800) == saved
