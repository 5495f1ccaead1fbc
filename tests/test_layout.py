"""The package DAG the design names: imports go proxy → analyzer, never back; the emulator
uses only analyzer; kvcache stands alone (the proxy reaches it over HTTP)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OURS = ("proxy", "analyzer", "kvcache")


def imports_of(package: str) -> dict[str, set[str]]:
    """module path → the first-party modules it imports (top level and inside functions)."""
    out: dict[str, set[str]] = {}
    for path in (ROOT / package).rglob("*.py"):
        found = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
        out[str(path.relative_to(ROOT))] = {m for m in found if m.split(".")[0] in OURS}
    return out


def test_analyzer_imports_only_itself():
    bad = {p: m for p, ms in imports_of("analyzer").items() if (m := {x for x in ms if not x.startswith("analyzer")})}
    assert bad == {}


def test_the_emulator_imports_only_analyzer_and_itself():
    emulator = {p: ms for p, ms in imports_of("proxy").items() if p.startswith("proxy/emulator/")}
    bad = {p: m for p, ms in emulator.items() if (m := {x for x in ms if not x.startswith(("analyzer", "proxy.emulator"))})}
    assert emulator and bad == {}


def test_the_proxy_never_imports_the_engine():
    bad = {p: m for p, ms in imports_of("proxy").items() if (m := {x for x in ms if x.startswith("kvcache")})}
    assert bad == {}  # `prefixgate local` and `bench engine` are loaded by name (proxy/cli.py)


def test_the_engine_imports_neither_proxy_nor_analyzer():
    bad = {p: m for p, ms in imports_of("kvcache").items() if (m := {x for x in ms if not x.startswith("kvcache")})}
    assert bad == {}
