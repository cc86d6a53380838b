"""Builds the cffi PTY extension (desktop.native._pty) from native/ during pip install, and puts
the built web UI (web/dist) into wheels as desktop/web_dist."""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

WEB_DIST = Path(__file__).resolve().parent / "web" / "dist"


class BuildPyWithWebUi(build_py):
    """build_py, plus web/dist copied to desktop/web_dist (where desktop.config looks)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install serves web/dist from the checkout
        if not (WEB_DIST / "index.html").is_file():
            raise SystemExit("setup.py: web/dist is missing; build the UI first (make setup)")
        target = Path(self.build_lib) / "desktop" / "web_dist"
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(WEB_DIST, target)


setup(
    cffi_modules=["native/pty_build.py:ffibuilder"],
    cmdclass={"build_py": BuildPyWithWebUi},
    # The PTY module uses CPython's stable ABI (cffi, Py_LIMITED_API): one wheel serves Python
    # 3.11 and newer on the platform it was built for.
    options={"bdist_wheel": {"py_limited_api": "cp311"}},
)
