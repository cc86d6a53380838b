"""Bookkeeping of Desk's own background processes (the service and the PTY host): registration,
locks, logs, liveness, one service per data dir; it imports nothing of Desk but `config`."""
