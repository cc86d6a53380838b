"""Desk: a desktop workbench for AI-assisted coding."""

__version__ = "0.1.0"
