"""Project instructions: which files are in effect, in which order, and how a big one is cut."""

from __future__ import annotations

from pathlib import Path

from desktop.agent import instructions
from desktop.agent.instructions import MAX_INSTRUCTION_BYTES, load, render


def tree(tmp_path: Path) -> tuple[Path, Path]:
    """A global file, a repository root with AGENTS.md, a folder with only CLAUDE.md, and the
    session's folder with both."""
    home = tmp_path / "config" / "AGENTS.md"
    home.parent.mkdir(parents=True)
    home.write_text("global rules")
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "AGENTS.md").write_text("root rules")
    (root / "pkg").mkdir()
    (root / "pkg" / "CLAUDE.md").write_text("pkg claude rules")
    session = root / "pkg" / "app"
    session.mkdir()
    (session / "AGENTS.md").write_text("app agents rules")
    (session / "CLAUDE.md").write_text("app claude rules")
    return home, session


def test_files_come_global_first_then_from_the_repository_root_down(tmp_path: Path) -> None:
    home, session = tree(tmp_path)
    (tmp_path / "AGENTS.md").write_text("above the repository: not in effect")
    files = load(str(session), home)
    assert [f.text for f in files] == [
        "global rules",
        "root rules",
        "pkg claude rules",
        "app agents rules",  # a folder's AGENTS.md wins over its CLAUDE.md
    ]


def test_a_folder_outside_any_repository_has_only_its_own_file(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("parent")
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "CLAUDE.md").write_text("own")
    assert [f.text for f in load(str(folder), tmp_path / "none.md")] == ["own"]


def test_a_missing_folder_still_gets_the_global_file(tmp_path: Path) -> None:
    home, _ = tree(tmp_path)
    assert [f.text for f in load(str(tmp_path / "gone"), home)] == ["global rules"]


def test_a_file_over_the_cap_is_cut_with_a_visible_note(tmp_path: Path) -> None:
    big = tmp_path / "AGENTS.md"
    big.write_text("x" * (100 * 1024))
    (only,) = load(str(tmp_path), tmp_path / "none.md")
    assert only.cut
    assert only.size == 100 * 1024
    assert only.text.startswith("x" * MAX_INSTRUCTION_BYTES)
    assert "Desk cut this file at 32 KiB of its 102400 bytes" in only.text
    assert only.json() == {"path": str(big), "bytes": 102400, "cut": True, "text": only.text}


def test_the_rendered_section_is_byte_stable_and_names_each_file(tmp_path: Path) -> None:
    home, session = tree(tmp_path)
    first = render(load(str(session), home))
    assert first == render(load(str(session), home))
    assert first.index(f"Instructions from {home}") < first.index("root rules")


def test_the_global_file_follows_xdg_config_home(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path), "HOME": "/nowhere"}
    assert instructions.global_file(env) == tmp_path / "desk" / "AGENTS.md"
    assert instructions.global_file({"HOME": "/h"}) == Path("/h/.config/desk/AGENTS.md")
