"""The parts table of docs/ARCHITECTURE.md says which parts each part imports: the code agrees,
and no module of desktop/ imports itself through others (TYPE_CHECKING included). The tests
share code only through tests/support: no test module or conftest is imported."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
PACKAGE = PROJECT / "desktop"
DOC = PROJECT / "docs" / "ARCHITECTURE.md"
ROW = re.compile(r"^\| `desktop/([a-z_]+)(?:/|\.py)` [^|]*\|[^|]*\| (?P<imports>[^|]*) \|$")
NAME = re.compile(r"`([a-z_]+)(?:\.[a-z_.]+)?`")


def documented_imports() -> dict[str, set[str]]:
    """Each part's row: the parts named in backticks in its imports column."""
    table: dict[str, set[str]] = {}
    for line in DOC.read_text().splitlines():
        row = ROW.match(line)
        if row:
            table[row.group(1)] = set(NAME.findall(row.group("imports")))
    return table


def module_name(path: Path) -> str:
    parts = path.relative_to(PROJECT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, modules: set[str]) -> Iterator[str]:
    """Every `desktop.*` module a file imports, wherever the import statement stands
    (`from package import submodule` imports the submodule, not the package's door)."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path.parent)
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                yield f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base


def import_graph() -> dict[str, set[str]]:
    files = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    names = set(files)
    return {
        name: {module for module in imported_modules(path, names) if module in files} - {name}
        for name, path in files.items()
    }


def part_of(module: str) -> str:
    return module.split(".")[1] if module.count(".") else module


def test_the_parts_table_lists_what_each_part_imports() -> None:
    table = documented_imports()
    actual: dict[str, set[str]] = {part: set() for part in table}
    for module, imports in import_graph().items():
        if module == "desktop" or module.startswith("desktop.__"):
            continue
        part = part_of(module)
        assert part in table, f"desktop/{part} has no row in docs/ARCHITECTURE.md's parts table"
        actual[part] |= {part_of(name) for name in imports} - {part, "desktop"}
    assert actual == table


def test_no_module_imports_itself_through_others() -> None:
    graph = import_graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                cycle = [*path[path.index(target) :], target] if target in path else [target]
                raise AssertionError("import circle: " + " -> ".join(cycle))
            if target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])


TESTS = PROJECT / "tests"


def is_test_or_conftest(module: str) -> bool:
    name = module.rsplit(".", 1)[-1]
    return name.startswith("test_") or name == "conftest"


def test_tests_share_code_only_through_tests_support() -> None:
    """Helpers and fixtures live in tests/support (fixtures as plugins listed in
    tests/conftest.py), never in a test module or a suite's conftest that others import."""
    files = {module_name(path): path for path in TESTS.rglob("*.py")}
    names = set(files)
    imports = sorted(
        f"{module} imports {target}"
        for module, path in files.items()
        for target in imported_modules(path, names)
        if target in files and target != module and is_test_or_conftest(target)
    )
    assert imports == []
    helpers = sorted(
        module
        for module, path in files.items()
        if not is_test_or_conftest(module)
        and path.name != "__init__.py"
        and not path.is_relative_to(TESTS / "support")
    )
    assert helpers == [], "test helper modules outside tests/support"
