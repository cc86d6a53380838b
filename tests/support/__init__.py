"""Helpers shared by every test suite."""
