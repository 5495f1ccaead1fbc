"""The test suite's own layout: a test module imports no other test module.

What tests share (fixtures' bodies, servers, clients, payloads, record sets) lives in
``tests/support/``; fixtures that pytest must find live in ``conftest.py`` files, which pytest
discovers on its own (nobody imports them). So every import of a first-party test module, from a
test module, a conftest or a support module, at module level or inside a function, absolute or
relative, names ``tests.support`` or a module under it. ``tests/fixtures/`` is data (the lint
corpus), never imported, and not checked.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
SUPPORT = "tests.support"

ALLOWED: set[tuple[str, str]] = set()  # (importing file, imported module) pairs let through: none


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _imported(path: Path) -> set[str]:
    """The first-party test modules (``tests`` and below) that ``path`` imports."""
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:  # `from tests.e2e import test_sdk` imports the module test_sdk
                found.add(f"{module}.{alias.name}" if _is_module(f"{module}.{alias.name}") else module)
    return {m for m in found if m == "tests" or m.startswith("tests.")}


def test_no_test_module_imports_another_only_tests_support():
    bad = set()
    for path in sorted(TESTS.rglob("*.py")):
        if (TESTS / "fixtures") in path.parents:
            continue
        rel = str(path.relative_to(ROOT))
        for module in _imported(path):
            if not (module == SUPPORT or module.startswith(SUPPORT + ".")) and (rel, module) not in ALLOWED:
                bad.add((rel, module))
    assert bad == set(), (
        "import these from tests/support/ (fixtures: a conftest.py), not from another test module"
    )
