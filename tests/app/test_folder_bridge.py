"""The folder bridge opens a dialog only for a well-formed request, one at a time, and
answers with the request's id (desktop/app/folder_bridge.py)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from desktop.app.folder_bridge import OFFERED_KEY, REPLY_KEY, REQUEST_KEY, FolderBridge


def recording(opened: list[str | None], answer: str) -> Any:
    def choose(start: str | None) -> str:
        opened.append(start)
        return answer

    return choose


class State:
    """pywebview's State as the bridge uses it: attributes and `+=` for a change handler."""

    def __init__(self) -> None:
        self.handlers: list[Any] = []

    def __iadd__(self, handler: Any) -> State:
        self.handlers.append(handler)
        return self


def test_attach_offers_the_dialog_and_listens() -> None:
    state = State()
    bridge = FolderBridge(state, lambda start: None)
    bridge.attach()
    assert getattr(state, OFFERED_KEY) is True
    assert state.handlers == [bridge.changed]


def test_a_request_is_answered_with_its_id_and_the_chosen_folder() -> None:
    state = State()
    asked: list[str | None] = []
    bridge = FolderBridge(state, recording(asked, "/home/me/project"))
    bridge.changed("change", REQUEST_KEY, {"id": "req-1", "start": "/home/me"})
    assert asked == ["/home/me"]
    assert getattr(state, REPLY_KEY) == {"id": "req-1", "path": "/home/me/project"}


@pytest.mark.parametrize(
    "request_value",
    [
        None,
        "req-1",
        {"start": "/tmp"},
        {"id": "", "start": None},
        {"id": "x" * 65},
        {"id": "a b"},
        {"id": "req", "start": 3},
        {"id": "req", "start": "/" * 5000},
    ],
)
def test_a_malformed_request_opens_nothing_and_answers_nothing(request_value: object) -> None:
    state = State()
    opened: list[str | None] = []
    bridge = FolderBridge(state, recording(opened, "/tmp"))
    bridge.changed("change", REQUEST_KEY, request_value)
    assert opened == []
    assert not hasattr(state, REPLY_KEY)


def test_other_keys_and_deletions_are_ignored() -> None:
    state = State()
    opened: list[str | None] = []
    bridge = FolderBridge(state, recording(opened, "/tmp"))
    bridge.changed("change", REPLY_KEY, {"id": "req", "path": "/etc"})
    bridge.changed("delete", REQUEST_KEY, {"id": "req"})
    assert opened == []


def test_a_second_request_while_a_dialog_is_open_is_answered_cancelled() -> None:
    state = State()
    release = threading.Event()
    entered = threading.Event()

    def choose(start: str | None) -> str:
        entered.set()
        release.wait(10)
        return "/first"

    bridge = FolderBridge(state, choose)
    first = threading.Thread(target=bridge.changed, args=("change", REQUEST_KEY, {"id": "one"}))
    first.start()
    assert entered.wait(10)
    bridge.changed("change", REQUEST_KEY, {"id": "two"})
    assert getattr(state, REPLY_KEY) == {"id": "two", "path": None}
    release.set()
    first.join(10)
    assert getattr(state, REPLY_KEY) == {"id": "one", "path": "/first"}
