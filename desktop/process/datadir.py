"""One service per data dir: the flock a `desk serve` holds on its data dir for as long as it
runs, and the record (pid, url, token) that names the holder to everyone else."""

from __future__ import annotations

import contextlib
from pathlib import Path

from desktop.process.liveness import is_alive
from desktop.process.lock import FileLock
from desktop.process.registration import (
    CorruptRegistration,
    ServiceRegistration,
    read_registration,
    remove_registration,
    write_registration,
)

LOCK_NAME = "service.lock"
OWNER_NAME = "service-owner.json"


class DataDirInUse(RuntimeError):
    """Another live service holds the data dir; the message names it."""

    def __init__(self, data_dir: Path, owner: ServiceRegistration | None) -> None:
        who = f"pid {owner.pid}, {owner.url}" if owner else "a process that is still starting"
        super().__init__(
            f"the data dir {data_dir} is already used by another Desk service ({who}); "
            "use that one, or stop it first (`desk service stop`, or Ctrl-C where `desk serve` "
            "was started by hand)"
        )
        self.owner = owner


def current_owner(data_dir: Path) -> ServiceRegistration | None:
    """The live service holding `data_dir`, as its record names it (None: none, or gone)."""
    with contextlib.suppress(CorruptRegistration):
        owner = read_registration(data_dir / OWNER_NAME, ServiceRegistration)
        if owner is not None and is_alive(owner.pid):
            return owner
    return None


class DataDirClaim:
    """This process's hold on a data dir: taken before the database opens, published once the
    service listens, dropped (with its record) at exit; the kernel drops it if we die."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self._lock = FileLock(data_dir / LOCK_NAME)
        self._owner: ServiceRegistration | None = None

    def take(self) -> None:
        if not self._lock.try_acquire():
            raise DataDirInUse(self.data_dir, current_owner(self.data_dir))

    def publish(self, owner: ServiceRegistration) -> None:
        write_registration(self.data_dir / OWNER_NAME, owner)
        self._owner = owner

    def release(self) -> None:
        if self._owner is not None:
            remove_registration(
                self.data_dir / OWNER_NAME, ServiceRegistration, pid=self._owner.pid
            )
        self._lock.release()
