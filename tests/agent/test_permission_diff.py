"""What the person is shown before an edit or a write runs in `ask` mode."""

from __future__ import annotations

from desktop.agent.tools_exec import _diff


def test_an_edit_is_shown_as_a_unified_diff_of_the_edit_tools_own_arguments() -> None:
    diff = _diff("edit", {"path": "notes.txt", "old": "alpha", "new": "beta\ngamma"})
    assert diff is not None
    assert diff.splitlines() == [
        "--- a/notes.txt",
        "+++ b/notes.txt",
        "@@ -1 +1,2 @@",
        "-alpha",
        "+beta",
        "+gamma",
    ]


def test_a_write_shows_its_content_and_a_shell_call_no_diff() -> None:
    assert _diff("write", {"path": "f", "content": "hi"}) == "hi"
    assert _diff("shell", {"command": "ls"}) is None
