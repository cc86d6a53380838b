"""Fixtures for the security tests: a real PTY host per test where one is needed."""

from tests.support.host import host, start_host

__all__ = ["host", "start_host"]
