"""Paths, settings and environment for every part of Desk.

Nothing here imports the rest of the package: every part may import this module.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
# web/dist sits beside the package in a checkout; PyInstaller bundles it as desktop/web_dist.
_WEB_DIST_CANDIDATES = (PACKAGE_DIR / "web_dist", PACKAGE_DIR.parent / "web" / "dist")


def web_dist_dir() -> Path:
    override = os.environ.get("DESK_WEB_DIST")
    if override:
        return Path(override).resolve()
    for candidate in _WEB_DIST_CANDIDATES:
        if (candidate / "index.html").is_file():
            return candidate
    return _WEB_DIST_CANDIDATES[-1]


def default_data_dir(env: Mapping[str, str] | None = None) -> Path:
    """The data dir when none is given; `env` is another process's environment (default ours)."""
    env = os.environ if env is None else env
    home = env.get("HOME") or str(Path.home())
    base = env.get("XDG_DATA_HOME") or str(Path(home) / ".local" / "share")
    return Path(base) / "desk"


def default_config_dir(env: Mapping[str, str] | None = None) -> Path:
    """Desk's folder of the user's own settings files (`$XDG_CONFIG_HOME/desk`)."""
    env = os.environ if env is None else env
    home = env.get("HOME") or str(Path.home())
    return Path(env.get("XDG_CONFIG_HOME") or str(Path(home) / ".config")) / "desk"


def default_runtime_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    xdg = env.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isdir(xdg):
        return Path(xdg) / "desk"
    return shared_temp_runtime_dir()


def shared_temp_runtime_dir() -> Path:
    """`desk-<uid>` in the shared temp dir: other users may have made that name first."""
    return Path(tempfile.gettempdir()) / f"desk-{os.getuid()}"


class UnsafeDirectory(ValueError):
    """A directory Desk would keep its private files in is not safely its own."""


def check_own_dir(path: Path) -> None:
    """Refuse `path` unless it is missing or a real directory (not a symlink) of this user.

    A group/world-writable mode on our own directory is repaired by ensure_private_dir; a
    directory of another user (or a link planted in a shared /tmp) is never used."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode):
        raise UnsafeDirectory(
            f"{path} is a symbolic link; Desk keeps its private files only in a directory "
            "of its own. Remove it, or set XDG_RUNTIME_DIR or DESK_RUNTIME_DIR."
        )
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeDirectory(f"{path} is not a directory; remove it or choose another one.")
    if info.st_uid != os.getuid():
        raise UnsafeDirectory(
            f"{path} belongs to another user (uid {info.st_uid}); Desk will not keep its "
            "files there. Remove it, or set XDG_RUNTIME_DIR or DESK_RUNTIME_DIR."
        )


def ensure_private_dir(path: Path) -> Path:
    """Create `path` (and parents) and make sure only its owner, this user, can enter it
    (0700); a symlink or another user's directory there is refused (UnsafeDirectory)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    check_own_dir(path)
    if stat.S_IMODE(os.lstat(path).st_mode) != 0o700:
        os.chmod(path, 0o700, follow_symlinks=False)
    return path


SETTING_PREFIX = "DESK_"


def without_desk_settings(env: Mapping[str, str]) -> dict[str, str]:
    """`env` without Desk's own settings and secrets (every DESK_* variable)."""
    return {key: value for key, value in env.items() if not key.startswith(SETTING_PREFIX)}


def write_private_file(path: Path, data: str | bytes) -> None:
    """Atomically replace `path` with `data`, readable by the owner only (0600)."""
    raw = data.encode() if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_json_file(path: Path) -> dict[str, object] | None:
    """The JSON object stored at `path`; None when missing; ValueError when corrupt."""
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    value = json.loads(raw)
    if not isinstance(value, dict):
        raise ValueError(f"{path} does not hold a JSON object")
    return value


@dataclass(frozen=True)
class ProviderSettings:
    provider: str = "openai-compatible"
    base_url: str = ""
    model: str = ""
    api_key: str = field(default="", repr=False)


@dataclass(frozen=True)
class Settings:
    data_dir: Path
    runtime_dir: Path
    provider: ProviderSettings
    pty_ring_bytes: int = 2 * 1024 * 1024
    pty_host_idle_exit_seconds: float = 600.0
    # How long a finished agent job's terminal is kept after its command ended (the service's
    # cleanup sweep removes it then, unless a notice or a tool call still needs it).
    job_retention_seconds: float = 24 * 3600.0
    # Host names besides the loopback ones that the service answers (DNS-rebinding defence).
    allowed_hosts: tuple[str, ...] = ()
    # How often the PTY host saves terminals whose output changed, for a crash.
    pty_autosave_seconds: float = 30.0

    @property
    def database_path(self) -> Path:
        return self.data_dir / "desk.sqlite3"

    @property
    def token_path(self) -> Path:
        return self.data_dir / "auth-token"

    @property
    def browser_sessions_path(self) -> Path:
        return self.data_dir / "browser-sessions"

    @property
    def saved_terminals_dir(self) -> Path:
        return self.data_dir / "terminals"

    @property
    def provider_config_path(self) -> Path:
        return self.data_dir / "provider.json"

    @property
    def provider_key_path(self) -> Path:
        return self.data_dir / "provider-key"

    @property
    def service_registration_path(self) -> Path:
        return self.runtime_dir / "service.json"

    @property
    def pty_host_registration_path(self) -> Path:
        return self.runtime_dir / "pty-host.json"

    def ensure_dirs(self) -> None:
        ensure_private_dir(self.data_dir)
        ensure_private_dir(self.runtime_dir)


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be a number, got {raw!r}") from exc


def _positive(value: float, name: str) -> float:
    if not value > 0:
        raise ValueError(f"{name} must be a positive number of seconds, got {value}")
    return value


def load_settings(
    data_dir: str | Path | None = None, runtime_dir: str | Path | None = None
) -> Settings:
    """Settings from arguments first, then DESK_* environment variables, then defaults."""
    data = Path(data_dir or os.environ.get("DESK_DATA_DIR") or default_data_dir()).expanduser()
    runtime = Path(
        runtime_dir or os.environ.get("DESK_RUNTIME_DIR") or default_runtime_dir()
    ).expanduser()
    if runtime == shared_temp_runtime_dir():
        # Never follow a name another user may have planted in the shared temp dir.
        check_own_dir(runtime)
        runtime = runtime.parent.resolve() / runtime.name
    else:
        runtime = runtime.resolve()
    provider = ProviderSettings(
        provider=os.environ.get("DESK_PROVIDER", "openai-compatible"),
        base_url=os.environ.get("DESK_BASE_URL", ""),
        model=os.environ.get("DESK_MODEL", ""),
        api_key=os.environ.get("DESK_API_KEY", ""),
    )
    return Settings(
        data_dir=data.resolve(),
        runtime_dir=runtime,
        provider=provider,
        pty_ring_bytes=int(_env_float("DESK_PTY_RING_BYTES", 2 * 1024 * 1024)),
        pty_host_idle_exit_seconds=_env_float("DESK_PTY_HOST_IDLE_EXIT", 600.0),
        job_retention_seconds=_positive(
            _env_float("DESK_JOB_RETENTION", 24 * 3600.0), "DESK_JOB_RETENTION"
        ),
        allowed_hosts=tuple(
            name.strip() for name in os.environ.get("DESK_ALLOWED_HOSTS", "").split(",")
        ),
        pty_autosave_seconds=_positive(
            _env_float("DESK_PTY_AUTOSAVE_SECONDS", 30.0), "DESK_PTY_AUTOSAVE_SECONDS"
        ),
    )


def desk_command(*args: str) -> list[str]:
    """argv that runs `desk <args>` with this same installation (a PyInstaller bundle or not)."""
    if getattr(sys, "frozen", False):
        return [sys.executable, *args]
    return [sys.executable, "-m", "desktop", *args]


def user_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for programs started for the user (terminals, agent tools).

    Inside a PyInstaller bundle every process inherits the bundle's LD_LIBRARY_PATH and
    bookkeeping variables; a user's git or curl must not load the bundle's libssl. Desk's
    own DESK_* settings and secrets are never passed on.
    """
    env = without_desk_settings(os.environ if base is None else base)
    if getattr(sys, "frozen", False) or "LD_LIBRARY_PATH_ORIG" in env:
        original = env.pop("LD_LIBRARY_PATH_ORIG", None)
        if original:
            env["LD_LIBRARY_PATH"] = original
        else:
            env.pop("LD_LIBRARY_PATH", None)
    for name in list(env):
        if name.startswith("_PYI_") or name.startswith("_MEIPASS"):
            del env[name]
    return env
