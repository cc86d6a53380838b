"""The screen model of a terminal, behind one door: `ScreenModel`.

- model.py: ScreenModel, the queue of unparsed output and the worker-thread parse.
- skip.py: which queued output cannot change the final screen (with the proof).
- fast.py: FastScreen and FastStream, quicker drawing and parsing with the reference's results.
- reference.py: TerminalScreen and TerminalStream, pyte completed and fixed; the semantics the
  rest must agree with (tests compare against it).
- checkpoint.py: bytes that rebuild a screen on an empty terminal.

Only ScreenModel is meant for the rest of the PTY host; the other modules are its parts.
"""

from desktop.ptyhost.screen.model import ScreenModel

__all__ = ["ScreenModel"]
