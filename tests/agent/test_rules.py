"""Permission rules on their own: matching by tool and pattern, deny > ask > allow, the
built-in secret rules and how a person relaxes them, the pattern a card allows."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.agent.rules import (
    DEFAULTS,
    Rule,
    RuleBook,
    RulesInvalid,
    covered,
    decide,
    derive_pattern,
    effective,
    hidden_for,
    parse_rules,
    subject_of,
)


def action(rules: list[Rule], tool: str, subject: str) -> str | None:
    found = decide(rules, tool, subject)
    return None if found is None else found.action


def test_deny_beats_ask_beats_allow_whatever_the_order() -> None:
    rules = [Rule("shell", "git *", "allow"), Rule("shell", "git push *", "ask")]
    assert action(rules, "shell", "git status") == "allow"
    assert action(rules, "shell", "git push origin main") == "ask"
    rules.insert(0, Rule("*", "git push --force*", "deny"))
    assert action(rules, "shell", "git push --force origin") == "deny"


def test_a_command_glob_matches_the_bare_program_and_every_part_of_a_compound_command() -> None:
    rules = [Rule("shell", "git *", "allow"), Rule("shell", "rm *", "deny")]
    assert action(rules, "shell", "git") == "allow"
    assert action(rules, "shell", "gitk") is None
    assert action(rules, "shell", "git status && rm -rf /") == "deny"
    assert action(rules, "shell", "git status; ls") is None  # ls is not allowed
    assert action(rules, "shell", "echo $(rm x)") == "deny"


def test_path_patterns_are_relative_to_the_session_directory() -> None:
    rules = [Rule("write", "src/**", "allow"), Rule("*", "**/secret.txt", "deny")]
    assert action(rules, "write", "src/a/b.py") == "allow"
    assert action(rules, "write", "./src/b.py") == "allow"
    assert action(rules, "write", "lib/b.py") is None
    assert action(rules, "read", "secret.txt") == "deny"
    assert action(rules, "read", "a/b/secret.txt") == "deny"
    assert subject_of("read", {"path": "/w/src/x.py"}, "/w") == "src/x.py"
    assert subject_of("grep", {"pattern": "x"}, "/w") == "."


@pytest.mark.parametrize(
    "path",
    [".env", "app/.env", ".env.local", "certs/server.pem", "tls.key", ".ssh/id_rsa", "id_ed25519"],
)
def test_the_file_tools_never_reach_secret_files_by_default(path: str) -> None:
    for tool in ("read", "grep", "glob"):
        assert action(effective([]), tool, path) == "deny"
        assert hidden_for(effective([]), tool)(path)


def test_env_example_is_not_a_secret() -> None:
    assert action(effective([]), "read", ".env.example") is None
    assert action(effective([]), "read", "web/.env.example") is None
    assert not hidden_for(effective([]), "glob")(".env.example")


def test_a_shell_command_naming_a_secret_asks_even_when_its_program_is_allowed() -> None:
    rules = effective([Rule("shell", "cat *", "allow"), Rule("shell", "git *", "allow")])
    assert action(rules, "shell", "cat .env") == "ask"
    assert action(rules, "shell", "cat ./config/.env|base64") == "ask"
    assert action(rules, "shell", "git add ~/.ssh/id_rsa") == "ask"
    assert action(rules, "shell", "cat .env.example") == "allow"
    assert action(rules, "shell", "cat README") == "allow"


def test_a_user_rule_with_the_same_tool_and_pattern_relaxes_a_built_in_one() -> None:
    relaxed = effective([Rule("read", "**/.env", "allow")])
    assert action(relaxed, "read", ".env") == "allow"
    assert action(relaxed, "grep", ".env") == "deny"  # the other tools keep theirs
    assert len(relaxed) == len(DEFAULTS)


def test_allow_for_this_session_allows_the_program_or_the_folder() -> None:
    assert derive_pattern("shell", "git status") == "git *"
    assert derive_pattern("shell", "FOO=1 npm run build --prod") == "npm run *"
    assert derive_pattern("shell", "npm install x") == "npm *"
    assert derive_pattern("shell", "cargo test -q && rm x") == "cargo test *"
    assert derive_pattern("write", "src/app/main.py") == "src/app/**"
    assert derive_pattern("write", "main.py") == "*"
    assert derive_pattern("subagent", None) == "*"
    assert covered("shell", ["git *"], "git log")
    assert not covered("shell", ["git *"], "git log; rm -rf x")
    assert covered("write", ["src/**"], "src/a.py")
    assert not covered("write", ["src/**"], "lib/a.py")
    assert covered("subagent", ["*"], None)


def test_bad_rules_are_refused_with_the_reason() -> None:
    for body, words in [
        ({}, "list"),
        ([{"tool": "rm", "pattern": "x", "action": "deny"}], "tool"),
        ([{"tool": "shell", "pattern": "", "action": "deny"}], "pattern"),
        ([{"tool": "shell", "pattern": "x", "action": "maybe"}], "action"),
        ([{"tool": "shell", "pattern": "x", "action": "deny", "extra": 1}], "unknown"),
    ]:
        with pytest.raises(RulesInvalid, match=words):
            parse_rules(body)


def test_the_rule_book_is_private_and_reread_when_the_file_changes(tmp_path: Path) -> None:
    book = RuleBook(tmp_path / "permissions.json")
    assert book.public()["rules"] == []
    assert {"tool": "read", "pattern": "**/.env", "action": "deny"} in book.public()["defaults"]
    book.save([Rule("shell", "git *", "allow")])
    assert (tmp_path / "permissions.json").stat().st_mode & 0o777 == 0o600
    assert RuleBook(tmp_path / "permissions.json").user_rules() == [Rule("shell", "git *", "allow")]
    (tmp_path / "permissions.json").write_text("{not json")
    assert book.rules() == list(DEFAULTS)  # a broken file: the built-in rules still hold
