"""Which files a project ignores, as git reads them, and a folder walk that never enters an
ignored one. Blocking file I/O: call from a worker thread."""

from __future__ import annotations

import configparser
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ALWAYS_SKIPPED = frozenset({".git", ".hg", ".svn"})
MAX_IGNORE_FILE = 1024 * 1024


@dataclass(frozen=True)
class IgnoreLine:
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool


def _glob_part(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == len(pattern):
            out.append("/.*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
        elif pattern[i] == "[" and "]" in pattern[i + 2 :]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1 : end].replace("\\", "\\\\")
            out.append("[^" + body[1:] + "]" if body[:1] in ("!", "^") else "[" + body + "]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


def parse_line(line: str) -> IgnoreLine | None:
    """One line of a gitignore file; None for blanks and comments."""
    line = line.rstrip("\n").rstrip("\r")
    stripped = line.rstrip(" ")
    if line.endswith("\\ ") and not stripped.endswith("\\"):
        stripped += " "
    line = stripped
    if not line or line.startswith("#"):
        return None
    negated = line.startswith("!")
    if negated or line.startswith("\\!") or line.startswith("\\#"):
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    line = line.lstrip("/")
    body = _glob_part(line)
    regex = re.compile(("" if anchored else "(?:.*/)?") + body + r"\Z", re.DOTALL)
    return IgnoreLine(regex, negated, dir_only)


def parse_lines(text: str) -> list[IgnoreLine]:
    return [rule for raw in text.splitlines() if (rule := parse_line(raw)) is not None]


def decide(rules: list[IgnoreLine], relative: str, is_dir: bool) -> bool | None:
    """True ignored, False re-included (`!`), None when no line speaks of the path."""
    verdict: bool | None = None
    for rule in rules:
        if rule.dir_only and not is_dir:
            continue
        if rule.regex.match(relative):
            verdict = not rule.negated
    return verdict


def _read(path: Path) -> list[IgnoreLine]:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_IGNORE_FILE)
    except OSError:
        return []
    return parse_lines(data.decode("utf-8", errors="replace"))


def global_excludes_file() -> Path | None:
    """The person's global excludes file: git's `core.excludesFile`, else
    `$XDG_CONFIG_HOME/git/ignore`."""
    home = Path.home()
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    for config in (home / ".gitconfig", xdg / "git" / "config"):
        parser = configparser.RawConfigParser(strict=False)
        try:
            parser.read(config, encoding="utf-8")
        except (configparser.Error, OSError, UnicodeDecodeError):
            continue
        for section in parser.sections():
            if section.strip().lower() == "core":
                for key, value in parser.items(section):
                    if key.lower() == "excludesfile" and value.strip():
                        return Path(os.path.expanduser(value.strip().strip('"')))
    return xdg / "git" / "ignore"


def repository_root(folder: Path) -> Path | None:
    """The nearest folder at or above `folder` holding `.git`."""
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


class Ignores:
    """The ignore rules that apply under `base` (a real folder): from its repository's root
    (else from `base`) down, per folder, read once per search."""

    def __init__(self, base: Path) -> None:
        self.top = repository_root(base) or base
        extra: list[IgnoreLine] = []
        excludes = global_excludes_file()
        if excludes is not None:
            extra += _read(excludes)
        extra += _read(self.top / ".git" / "info" / "exclude")
        self._top_extra = extra
        self._files: dict[Path, list[IgnoreLine]] = {}

    def _rules_of(self, folder: Path) -> list[IgnoreLine]:
        found = self._files.get(folder)
        if found is None:
            found = _read(folder / ".gitignore")
            if folder == self.top:
                found = self._top_extra + found
            self._files[folder] = found
        return found

    def ignored(self, path: Path, is_dir: bool) -> bool:
        """Whether git would ignore `path` (its own name: the walk never enters an ignored
        folder, so the parents are known not to be)."""
        if path.name in ALWAYS_SKIPPED:
            return True
        try:
            relative = path.relative_to(self.top)
        except ValueError:
            return False
        verdict: bool | None = None
        folder = self.top
        for part in (*relative.parts[:-1], None):
            rules = self._rules_of(folder)
            if rules:
                inner = path.relative_to(folder).as_posix()
                found = decide(rules, inner, is_dir)
                if found is not None:
                    verdict = found
            if part is None:
                break
            folder = folder / part
        return bool(verdict)


def walk(
    base: Path,
    *,
    respect_ignores: bool,
    skip_dir: Callable[[Path], bool] = lambda _: False,
) -> Iterator[tuple[Path, bool]]:
    """Every file under `base` (sorted, folders first visited in order), and whether the
    walk left anything out because it is ignored. Never enters `.git`, `.hg`, `.svn`, an
    ignored folder (when `respect_ignores`) or one `skip_dir` refuses."""
    ignores = Ignores(base) if respect_ignores else None
    for folder, dirs, files in os.walk(base):
        here = Path(folder)
        kept: list[str] = []
        for name in sorted(dirs):
            path = here / name
            if name in ALWAYS_SKIPPED or skip_dir(path):
                continue
            if ignores is not None and ignores.ignored(path, True):
                yield path, True
                continue
            kept.append(name)
        dirs[:] = kept
        for name in sorted(files):
            path = here / name
            if ignores is not None and ignores.ignored(path, False):
                yield path, True
                continue
            yield path, False


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob over a relative path (`**/*.py`, `src/*.ts`): `*` within a folder, `**`
    across folders."""
    return re.compile(_glob_part(pattern.removeprefix("./")) + r"\Z", re.DOTALL)
