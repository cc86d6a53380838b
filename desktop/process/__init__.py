"""Bookkeeping of Desk's own background processes: the service and the PTY host.

Both daemons are found through a registration file, are the only one of their kind through a
file lock, write a log that a failed start quotes, and are watched by pid. Those rules are
written here once, for the service manager (desktop.app) and the PTY host (desktop.ptyhost):

- liveness.py: facts about a pid read from /proc (alive, argv, start time), waiting for an
  exit (blocking or on the event loop), SIGTERM-then-SIGKILL.
- lock.py: FileLock, the exclusive flock that makes a process the only one of its kind.
- logfile.py: a daemon's log file (0600, rotated) and its tail for error messages.
- registration.py: the registration records (service and PTY host) and their 0600 files.
- datadir.py: one service per data dir (the flock a `desk serve` holds on it and the record
  naming the holder).

This package imports nothing of Desk but desktop.config, so every part may import it.
"""
