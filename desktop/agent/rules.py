"""Permission rules: the person's allow / ask / deny rules by tool and pattern, the built-in
secret rules, how a call is matched against them, and the file that keeps them."""

from __future__ import annotations

import json
import os
import re
import shlex
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from desktop.config import write_private_file
from desktop.tools.ignore import glob_regex

TOOLS = ("shell", "read", "write", "edit", "grep", "glob", "*")
FILE_TOOLS = frozenset({"read", "write", "edit", "grep", "glob"})
ACTIONS = ("allow", "ask", "deny")
_RANK = {"allow": 1, "ask": 2, "deny": 3}
MAX_RULES = 500
RULES_FILE = "permissions.json"  # in the data dir, 0600
MAX_PATTERN = 1000

SECRET_PATTERNS = (
    "**/.env",
    "**/.env.*",
    "**/*.pem",
    "**/*.key",
    "**/id_rsa*",
    "**/id_ed25519*",
)
SECRET_EXCEPTIONS = ("**/.env.example",)


class RulesInvalid(ValueError):
    """A rules document that cannot be used; the message says what is wrong."""


@dataclass(frozen=True)
class Rule:
    tool: str
    pattern: str
    action: str
    unless: tuple[str, ...] = ()  # path patterns this rule leaves alone (built-in ones)
    builtin: bool = field(default=False, compare=False)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tool": self.tool, "pattern": self.pattern, "action": self.action}
        if self.unless:
            out["except"] = list(self.unless)
        return out


def _secret_rules() -> tuple[Rule, ...]:
    rules: list[Rule] = []
    for pattern in SECRET_PATTERNS:
        unless = SECRET_EXCEPTIONS if pattern == "**/.env.*" else ()
        for tool in ("read", "grep", "glob"):
            rules.append(Rule(tool, pattern, "deny", unless, builtin=True))
        rules.append(Rule("shell", pattern, "ask", unless, builtin=True))
    return tuple(rules)


DEFAULTS = _secret_rules()


# --- patterns ---------------------------------------------------------------------------


@lru_cache(maxsize=2048)
def path_regex(pattern: str) -> re.Pattern[str]:
    """A path glob as a regex, read as the file tools read globs (`**/` any folders, none
    too; `*` and `?` within one folder; `[...]` a class)."""
    return glob_regex(pattern)


@lru_cache(maxsize=2048)
def command_regex(pattern: str) -> re.Pattern[str]:
    """A command-line glob as a regex: `*` anything (spaces and slashes too), `?` one
    character; a trailing ` *` may also match nothing (`git *` matches `git`)."""
    pattern = " ".join(pattern.split())
    tail = pattern.endswith(" *")
    core = pattern[:-2] if tail else pattern
    body = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in core)
    return re.compile(body + ("(?: .*)?" if tail else "") + r"\Z", re.DOTALL)


def is_path_pattern(rule: Rule, tool: str) -> bool:
    """Whether `rule` matches paths when applied to `tool` (a shell rule matches command
    lines unless its pattern starts with `**/`)."""
    return tool != "shell" or rule.pattern.startswith("**/")


def path_matches(rule: Rule, path: str) -> bool:
    path = normal_path(path)
    if not path_regex(rule.pattern).match(path):
        return False
    return not any(path_regex(p).match(path) for p in rule.unless)


def normal_path(path: str) -> str:
    path = os.path.normpath(path) if path else "."
    return path.removeprefix("./")


_SEGMENT = re.compile(r"\|\||&&|[;|&\n]|\$\(|`|\)")
_WORD = re.compile(r"[\s;&|<>()`'\"$=]+")


def command_parts(command: str) -> list[str]:
    """The simple commands of a command line (split at `;`, `&&`, `||`, `|`, `&`, `$(`)."""
    parts = [" ".join(p.split()) for p in _SEGMENT.split(command)]
    return [p for p in parts if p]


def command_words(command: str) -> list[str]:
    """Every word of a command line, loosely (what a file name could be)."""
    words = [w.removeprefix("./") for w in _WORD.split(command) if w]
    return [w.lstrip("/") if w.startswith("/") else w for w in words]


# --- deciding ---------------------------------------------------------------------------


def subject_of(tool: str, args: Mapping[str, Any], directory: str) -> str | None:
    """What a call's rules are matched against: the command line, or the path relative to
    the session directory (absolute when outside it); None for other tools."""
    if tool == "shell":
        return str(args.get("command", ""))
    if tool not in FILE_TOOLS:
        return None
    raw = str(args.get("path") or ".")
    if os.path.isabs(raw):
        base = os.path.normpath(directory)
        full = os.path.normpath(raw)
        if full == base:
            return "."
        if full.startswith(base.rstrip("/") + "/"):
            return full[len(base.rstrip("/")) + 1 :]
        return full
    return normal_path(raw)


def _strongest(rules: Iterable[Rule]) -> Rule | None:
    best: Rule | None = None
    for rule in rules:
        if best is None or _RANK[rule.action] > _RANK[best.action]:
            best = rule
    return best


def _applies(rule: Rule, tool: str) -> bool:
    return rule.tool in (tool, "*")


def decide(rules: Sequence[Rule], tool: str, subject: str | None) -> Rule | None:
    """The rule that decides the call (deny > ask > allow), or None when none matches."""
    if subject is None:
        return None
    mine = [r for r in rules if _applies(r, tool)]
    if tool != "shell":
        return _strongest(r for r in mine if path_matches(r, subject))
    words = command_words(subject)
    named = [r for r in mine if is_path_pattern(r, tool) and any(path_matches(r, w) for w in words)]
    by_part = []
    for part in command_parts(subject) or [""]:
        by_part.append(
            _strongest(
                r
                for r in mine
                if not is_path_pattern(r, tool) and command_regex(r.pattern).match(part)
            )
        )
    strict = _strongest([*named, *(r for r in by_part if r is not None)])
    if strict is not None and strict.action in ("deny", "ask"):
        return strict
    if by_part and all(r is not None for r in by_part):
        return by_part[0]
    return None


def covered(tool: str, patterns: Sequence[str], subject: str | None) -> bool:
    """Whether session allowances (patterns for `tool`) allow the call: every part of a
    command, or the path."""
    if not patterns:
        return False
    if subject is None or tool not in FILE_TOOLS | {"shell"}:
        return "*" in patterns
    if tool == "shell":
        parts = command_parts(subject)
        return bool(parts) and all(
            any(command_regex(p).match(part) for p in patterns) for part in parts
        )
    return any(path_matches(Rule(tool, p, "allow"), subject) for p in patterns)


_RUNNERS = {"npm", "pnpm", "yarn", "bun", "uv", "poetry", "cargo", "go", "make", "npx"}
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def derive_pattern(tool: str, subject: str | None) -> str:
    """What "allow for this session" allows for a call like this one: the program (and its
    subcommand for runners: `npm run *`) for a command, the file's folder for a path."""
    if subject is None:
        return "*"
    if tool == "shell":
        parts = command_parts(subject)
        try:
            words = shlex.split(parts[0]) if parts else []
        except ValueError:
            words = parts[0].split() if parts else []
        while words and _ASSIGNMENT.match(words[0]):
            words.pop(0)
        if not words:
            return " ".join(subject.split()) or "*"
        program = words[0]
        sub = words[1] if len(words) > 1 else ""
        script_runner = program in ("npm", "pnpm", "yarn", "bun")
        if (
            program in _RUNNERS
            and re.fullmatch(r"[a-z][a-z0-9:_-]*", sub)
            and (not script_runner or sub in ("run", "exec", "x"))
        ):
            return f"{program} {sub} *"
        return f"{program} *"
    folder = os.path.dirname(subject)
    if subject in (".", ""):
        return "**"
    return f"{folder}/**" if folder else "*"


def hidden_for(rules: Sequence[Rule], tool: str) -> Callable[[str], bool]:
    """Whether a path (relative to the session directory) is denied to `tool`: what glob and
    grep leave out of their results, and what read refuses whatever name reached it."""
    denied = [
        r for r in rules if _applies(r, tool) and r.action == "deny" and is_path_pattern(r, tool)
    ]

    def hidden(path: str) -> bool:
        return any(path_matches(r, path) for r in denied)

    return hidden


# --- the file ---------------------------------------------------------------------------


def parse_rules(body: object) -> list[Rule]:
    """The `rules` list of a PUT body (or of the stored file), every rule checked."""
    if not isinstance(body, list):
        raise RulesInvalid("rules must be a list.")
    if len(body) > MAX_RULES:
        raise RulesInvalid(f"At most {MAX_RULES} rules.")
    out: list[Rule] = []
    for i, item in enumerate(body):
        where = f"rules[{i}]"
        if not isinstance(item, dict):
            raise RulesInvalid(f"{where} must be an object.")
        unknown = set(item) - {"tool", "pattern", "action", "except"}
        if unknown:
            raise RulesInvalid(f"{where} has unknown field(s): {', '.join(sorted(unknown))}.")
        tool, pattern, action = item.get("tool"), item.get("pattern"), item.get("action")
        if tool not in TOOLS:
            raise RulesInvalid(f"{where}.tool must be one of {', '.join(TOOLS)}.")
        if action not in ACTIONS:
            raise RulesInvalid(f"{where}.action must be allow, ask or deny.")
        if not isinstance(pattern, str) or not pattern.strip() or len(pattern) > MAX_PATTERN:
            raise RulesInvalid(
                f"{where}.pattern must be a non-empty string of at most {MAX_PATTERN} characters."
            )
        if any(ord(c) < 32 for c in pattern):
            raise RulesInvalid(f"{where}.pattern must not contain control characters.")
        unless = item.get("except", [])
        if not isinstance(unless, list) or not all(
            isinstance(p, str) and 0 < len(p) <= MAX_PATTERN for p in unless
        ):
            raise RulesInvalid(f"{where}.except must be a list of path patterns.")
        assert isinstance(tool, str)
        assert isinstance(action, str)
        out.append(Rule(tool, pattern.strip(), action, tuple(unless)))
    return out


def effective(user: Sequence[Rule]) -> list[Rule]:
    """The user's rules, then every built-in rule no user rule replaces (same tool and
    pattern)."""
    replaced = {(r.tool, r.pattern) for r in user}
    return [*user, *(r for r in DEFAULTS if (r.tool, r.pattern) not in replaced)]


class RuleBook:
    """The person's rules in `path` (0600 JSON, `{rules: [...]}`), read again when the file
    changes. Blocking file I/O: call from a thread."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._seen: tuple[int, int] | None = None
        self._rules: list[Rule] = []

    def user_rules(self) -> list[Rule]:
        if self.path is None:
            return []
        with self._lock:
            try:
                info = self.path.stat()
            except FileNotFoundError:
                self._seen, self._rules = None, []
                return []
            stamp = (info.st_mtime_ns, info.st_size)
            if stamp != self._seen:
                try:
                    raw = json.loads(self.path.read_text(encoding="utf-8"))
                    rules = parse_rules(raw.get("rules") if isinstance(raw, dict) else None)
                except (OSError, ValueError):
                    rules = []  # a hand-edited file went wrong: the built-in rules still hold
                self._seen, self._rules = stamp, rules
            return list(self._rules)

    def rules(self) -> list[Rule]:
        return effective(self.user_rules())

    def save(self, rules: Sequence[Rule]) -> None:
        if self.path is None:
            raise RulesInvalid("No rules file.")
        data = json.dumps({"rules": [r.as_json() for r in rules]}, indent=2)
        with self._lock:
            write_private_file(self.path, data)
            self._seen = None

    def public(self) -> dict[str, Any]:
        return {
            "rules": [r.as_json() for r in self.user_rules()],
            "defaults": [r.as_json() for r in DEFAULTS],
        }
