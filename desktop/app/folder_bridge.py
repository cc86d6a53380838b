"""The page's one way into the window: the native folder dialog, as a request and a reply
written to two keys of pywebview's shared state.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

OFFERED_KEY = "folder_dialog"  # true: this window answers folder requests
REQUEST_KEY = "folder_request"  # the page writes {id, start}
REPLY_KEY = "folder_reply"  # the window writes {id, path}: a folder or null

_REQUEST_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_MAX_START = 4096

Chooser = Callable[[str | None], str | None]


def parse_request(value: object) -> tuple[str, str | None] | None:
    """(request id, starting folder) of a well-formed request, else None."""
    if not isinstance(value, dict):
        return None
    request_id, start = value.get("id"), value.get("start")
    if not isinstance(request_id, str) or not _REQUEST_ID.fullmatch(request_id):
        return None
    if start is not None and (not isinstance(start, str) or len(start) > _MAX_START):
        return None
    return request_id, start or None


class FolderBridge:
    """Answers the page's folder requests with `choose` (the native dialog), one at a time."""

    def __init__(self, state: Any, choose: Chooser) -> None:
        self._state = state
        self._choose = choose
        self._open = threading.Lock()

    def attach(self) -> None:
        # pywebview hands the state to every page it loads, so this survives navigation.
        setattr(self._state, OFFERED_KEY, True)
        self._state += self.changed

    def changed(self, kind: str, key: str, value: object = None) -> None:
        """pywebview's state handler; runs on a thread of its own per change."""
        if str(kind) != "change" or key != REQUEST_KEY:
            return
        request = parse_request(value)
        if request is None:
            return  # not a request this window makes sense of: no dialog, no reply to forge
        request_id, start = request
        path: str | None = None
        # A second request while a dialog is open is answered "cancelled", not stacked.
        if self._open.acquire(blocking=False):
            try:
                path = self._choose(start)
            finally:
                self._open.release()
        setattr(self._state, REPLY_KEY, {"id": request_id, "path": path})
