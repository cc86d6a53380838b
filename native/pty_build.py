"""cffi (API, out-of-line) build of desktop.native._pty from native/desk_pty.c.

Used by setup.py (`cffi_modules=["native/pty_build.py:ffibuilder"]`), so `pip install .` and
`pip install -e .` compile it. Run directly (`python native/pty_build.py`) to build the
extension in place into desktop/native/ for development.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from cffi import FFI

NATIVE_DIR = Path(__file__).resolve().parent
PROJECT_DIR = NATIVE_DIR.parent
MODULE_NAME = "desktop.native._pty"
RUN_DIRECTLY = __name__ == "__main__"

# The subset of native/desk_pty.h that Python calls (cffi's cdef has no preprocessor).
CDEF = """
#define DESK_STAGE_PARENT 0
#define DESK_STAGE_SETUP 1
#define DESK_STAGE_CHDIR 2
#define DESK_STAGE_EXEC 3
int desk_pty_spawn(char *const paths[], char *const argv[], char *const envp[],
                   const char *cwd, unsigned short cols, unsigned short rows, int *master_fd,
                   int *pid, int *fail_stage);
ssize_t desk_pty_read(int fd, char *buf, size_t len);
ssize_t desk_pty_write(int fd, const char *buf, size_t len);
int desk_pty_resize(int fd, unsigned short cols, unsigned short rows);
int desk_pty_foreground_pgid(int fd);
size_t desk_printable_end(const unsigned char *buf, size_t start, size_t end);
size_t desk_printable_start(const unsigned char *buf, size_t start, size_t end);
"""


def _source_path(path: Path) -> str:
    """Relative to setup.py's directory for setuptools (which wants relative sources and mirrors
    them under build/), absolute when run directly (cffi then compiles from a scratch dir)."""
    if RUN_DIRECTLY:
        return str(path)
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


ffibuilder = FFI()
ffibuilder.cdef(CDEF)
ffibuilder.set_source(
    MODULE_NAME,
    '#include "desk_pty.h"',
    sources=[_source_path(NATIVE_DIR / "desk_pty.c")],
    include_dirs=[_source_path(NATIVE_DIR)],
    libraries=["util"],
    extra_compile_args=["-Wall", "-O2"],
)


def build_in_place() -> Path:
    """Compile in a scratch directory and copy only the .so into desktop/native/, under the
    name pip gives it (cffi's generated code uses the limited API), replacing any other build
    so a stale one cannot shadow it."""
    package_dir = PROJECT_DIR / "desktop" / "native"
    with tempfile.TemporaryDirectory(prefix="desk-pty-build-") as scratch:
        built = Path(ffibuilder.compile(tmpdir=scratch, verbose=False))
        for stale in package_dir.glob("_pty.*so"):
            stale.unlink()
        target = package_dir / "_pty.abi3.so"
        shutil.copy2(built, target)
    return target


if RUN_DIRECTLY:
    print(build_in_place(), file=sys.stderr)
