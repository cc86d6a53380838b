"""Builds dist/desk_<version>_<arch>.deb from the PyInstaller bundle with dpkg-deb.

Usage: python scripts/build_deb.py BUNDLE OUT_DIR   (BUNDLE: the one-folder dist/Desk)

The package holds the bundle under /opt/desk, /usr/bin/desk (a symlink to it), desk.desktop,
the icon (SVG, and PNGs rendered with rsvg-convert) and a postrm that removes what is left of
/opt/desk on removal. Its Depends are the Debian packages of the shared libraries the bundle
links but does not carry (found with readelf, ldconfig and dpkg on the build machine) and of
the data files its libraries read. Run it with the venv's Python: it reads the version and
the desktop entry from the `desktop` package. Prints the .deb's path.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from desktop import __version__
from desktop.app.desktop_entry import APP_ID, ICON_SVG, entry_text

PACKAGE = "desk"
INSTALL_DIR = "opt/desk"
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
# Data files that libraries the bundle carries read from the system: the CA certificates
# (HTTPS to the model provider), fontconfig's configuration (with it, a font) and the X
# keyboard maps.
DATA_DEPENDS = ("ca-certificates", "fontconfig-config", "xkb-data")
# Terminal fallbacks (CJK text and emoji): without them those cells show boxes.
RECOMMENDS = "fonts-noto-cjk, fonts-noto-color-emoji"
MAINTAINER = "Desk maintainers <desk@localhost>"
DESCRIPTION = """\
desktop workbench for AI-assisted coding
 Desk is a native window with chat sessions with an AI agent that runs tools, and
 persistent terminal tabs. Terminals and the agent's commands live in a PTY host
 process that outlives the service, so restarts and upgrades keep them running."""
ELF_MAGIC = b"\x7fELF"
# Run as root, QtWebEngine makes a directory of its own in the bundle (resources/locales),
# which dpkg does not own and would leave behind: removing the package removes the folder.
# Never the data dirs: they are the users' own, under their homes.
POSTRM = """\
#!/bin/sh
set -e
if [ "$1" = remove ] || [ "$1" = purge ]; then
    rm -rf /opt/desk
fi
"""


def run(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


def elf_files(root: Path) -> list[Path]:
    found = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            with path.open("rb") as handle:
                if handle.read(4) == ELF_MAGIC:
                    found.append(path)
    return found


def needed_libraries(files: list[Path]) -> set[str]:
    """The sonames the files link (DT_NEEDED), read in one readelf call."""
    output = run("readelf", "--dynamic", "--wide", *map(str, files))
    return set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", output))


def system_library_paths() -> dict[str, str]:
    """soname -> path for this machine's architecture, from the dynamic loader's cache."""
    arch = sysconfig.get_config_var("MULTIARCH") or ""
    paths: dict[str, str] = {}
    for line in run("ldconfig", "-p").splitlines()[1:]:
        name, _, path = line.strip().partition(" => ")
        soname = name.split(" ", 1)[0]
        if soname not in paths and (not arch or f"/{arch}/" in path):
            paths[soname] = path
    return paths


def owning_package(path: str) -> str:
    """The Debian package that ships `path` (also looked up through /usr merge and links)."""
    real = os.path.realpath(path)
    candidates = {path, real}
    for name in list(candidates):
        if name.startswith("/usr/"):
            candidates.add(name[4:])
        else:
            candidates.add("/usr" + name)
    for candidate in sorted(candidates):
        done = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True)
        if done.returncode == 0:
            return done.stdout.split(":", 1)[0].strip()
    raise SystemExit(f"build_deb: no Debian package ships {path}")


def depends(bundle: Path) -> list[str]:
    """The packages of the libraries the bundle links but does not carry."""
    carried = {path.name for path in bundle.rglob("*")}
    missing = sorted(needed_libraries(elf_files(bundle)) - carried)
    paths = system_library_paths()
    unknown = [name for name in missing if name not in paths]
    if unknown:
        raise SystemExit(f"build_deb: the bundle needs libraries this machine lacks: {unknown}")
    return sorted({*DATA_DEPENDS, *(owning_package(paths[name]) for name in missing)})


def link_tree(source: Path, target: Path) -> None:
    """`source` copied to `target` as hard links when on one file system (seconds, not a copy
    of 400 MiB), as copies otherwise."""

    def link(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    shutil.copytree(source, target, symlinks=True, copy_function=link)


def render_icons(root: Path) -> None:
    icons = root / "usr/share/icons/hicolor"
    scalable = icons / "scalable/apps"
    scalable.mkdir(parents=True)
    shutil.copyfile(ICON_SVG, scalable / f"{APP_ID}.svg")
    for size in PNG_SIZES:
        folder = icons / f"{size}x{size}/apps"
        folder.mkdir(parents=True)
        run(
            "rsvg-convert",
            *("--width", str(size), "--height", str(size)),
            *("--output", str(folder / f"{APP_ID}.png")),
            str(ICON_SVG),
        )


def control(arch: str, installed_kib: int, needs: list[str]) -> str:
    return (
        f"Package: {PACKAGE}\n"
        f"Version: {__version__}\n"
        f"Architecture: {arch}\n"
        f"Maintainer: {MAINTAINER}\n"
        f"Installed-Size: {installed_kib}\n"
        f"Depends: {', '.join(needs)}\n"
        f"Recommends: {RECOMMENDS}\n"
        "Section: devel\n"
        "Priority: optional\n"
        f"Description: {DESCRIPTION}\n"
    )


def tree_kib(root: Path) -> int:
    return sum(path.lstat().st_size for path in root.rglob("*")) // 1024 + 1


def build(bundle: Path, out: Path) -> Path:
    if not (bundle / "Desk").is_file():
        raise SystemExit(f"build_deb: {bundle}/Desk is missing; run pyinstaller build.spec first")
    arch = run("dpkg", "--print-architecture").strip()
    needs = depends(bundle)
    out.mkdir(parents=True, exist_ok=True)
    deb = out / f"{PACKAGE}_{__version__}_{arch}.deb"
    with tempfile.TemporaryDirectory(prefix="desk-deb-", dir=out) as staging:
        root = Path(staging) / "root"
        root.mkdir(mode=0o755)
        (root / "opt").mkdir(mode=0o755)
        link_tree(bundle, root / INSTALL_DIR)
        (root / "usr/bin").mkdir(parents=True, mode=0o755)
        (root / "usr/bin/desk").symlink_to(f"/{INSTALL_DIR}/Desk")
        applications = root / "usr/share/applications"
        applications.mkdir(parents=True)
        (applications / f"{APP_ID}.desktop").write_text(entry_text("desk"))
        render_icons(root)
        for folder in [root, *(p for p in root.rglob("*") if p.is_dir() and not p.is_symlink())]:
            folder.chmod(0o755)
        debian = root / "DEBIAN"
        debian.mkdir(mode=0o755)
        (debian / "control").write_text(control(arch, tree_kib(root), needs))
        (debian / "postrm").write_text(POSTRM)
        (debian / "postrm").chmod(0o755)
        run(
            "dpkg-deb",
            "--root-owner-group",
            *("-Zzstd", "-z3"),  # seconds for 400 MiB; xz takes minutes on two cores
            "--build",
            str(root),
            str(deb),
        )
    return deb


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    print(build(args.bundle.resolve(), args.out.resolve()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
