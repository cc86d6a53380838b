"""Project instructions: the AGENTS.md files (a folder's CLAUDE.md when it has none) that reach
the system prompt, global first, then from the repository root down to the session's folder."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from desktop.config import default_config_dir

MAX_INSTRUCTION_BYTES = 32 * 1024  # per file: a huge file must not crowd out the conversation
NAMES = ("AGENTS.md", "CLAUDE.md")  # a folder's first that exists is its instructions


@dataclass(frozen=True)
class InstructionFile:
    path: str
    text: str
    size: int  # bytes on disk
    cut: bool

    def json(self) -> dict[str, object]:
        return {"path": self.path, "bytes": self.size, "cut": self.cut, "text": self.text}


def global_file(env: Mapping[str, str] | None = None) -> Path:
    return default_config_dir(env) / "AGENTS.md"


def repository_root(directory: Path) -> Path:
    """The nearest folder at or above `directory` holding `.git`, else `directory` itself."""
    for folder in (directory, *directory.parents):
        if (folder / ".git").exists():
            return folder
    return directory


def project_files(directory: Path) -> list[Path]:
    """Each folder's instructions, from the repository root down to `directory`."""
    root = repository_root(directory)
    folders = [directory, *directory.parents]
    chain = reversed(folders[: folders.index(root) + 1])
    found = (next((f / n for n in NAMES if (f / n).is_file()), None) for f in chain)
    return [path for path in found if path is not None]


def read_file(path: Path) -> InstructionFile | None:
    try:
        with path.open("rb") as f:
            data = f.read(MAX_INSTRUCTION_BYTES + 1)
            size = max(len(data), path.stat().st_size)
    except OSError:
        return None  # gone or unreadable since it was found: the prompt goes without it
    cut = len(data) > MAX_INSTRUCTION_BYTES
    text = data[:MAX_INSTRUCTION_BYTES].decode("utf-8", errors="replace")
    if cut:
        text += (
            f"\n[Desk cut this file at {MAX_INSTRUCTION_BYTES // 1024} KiB of its {size} bytes;"
            " read the file for the rest.]"
        )
    return InstructionFile(str(path), text, size, cut)


def load(directory: str, global_path: Path | None = None) -> list[InstructionFile]:
    """The files in effect for a session's folder, in prompt order (blocking: run in a thread)."""
    home = global_path or global_file()
    folder = Path(directory)
    paths = [home] if home.is_file() else []
    if folder.is_dir():
        paths += project_files(folder)
    return [f for f in map(read_file, paths) if f is not None]


def render(files: Sequence[InstructionFile]) -> str:
    """The prompt's instructions section: the same files give the same bytes."""
    return "\n\n".join(f"Instructions from {f.path}:\n{f.text.rstrip()}" for f in files)


async def project_instructions(directory: str) -> str:
    """The rendered section for a step, read fresh (an edit is seen at the next step)."""
    return render(await asyncio.to_thread(load, directory))
