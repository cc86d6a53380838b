"""The screen model of a terminal, behind one door: `ScreenModel` (model.py); the other modules
are its parts.
"""

from desktop.ptyhost.screen.model import ScreenModel

__all__ = ["ScreenModel"]
