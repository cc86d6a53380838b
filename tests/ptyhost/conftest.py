"""Fixtures for PTY host tests: a real daemon process per test."""

from tests.support.host import host, start_host

__all__ = ["host", "start_host"]
