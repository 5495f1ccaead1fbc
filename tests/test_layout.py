"""The package DAG the design names: imports go proxy → analyzer, never back; the emulator
uses only analyzer; kvcache stands alone (the proxy reaches it over HTTP) but for one leaf,
``analyzer.wire``: the OpenAI error and SSE shapes that the proxy, the emulator and the
engine's server all write, kept in one place. It imports no first-party module, so the
engine still pulls in nothing of the analyzer or the proxy."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OURS = ("proxy", "analyzer", "kvcache")
SHARED_LEAF = "analyzer.wire"  # the one module the engine may import from outside itself


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
    bad = {p: m for p, ms in imports_of("kvcache").items() if (m := {x for x in ms if not x.startswith("kvcache") and x != SHARED_LEAF})}
    assert bad == {}


def test_the_shared_wire_shapes_are_a_leaf():
    assert imports_of("analyzer")["analyzer/wire.py"] == set()


def test_lint_and_logs_do_not_import_each_other():
    """Both read forks from analyzer.divergence; neither depends on the other (no runtime cycle)."""
    modules = imports_of("analyzer")
    lint = {p: m for p, ms in modules.items() if p.startswith("analyzer/lint/") and (m := {x for x in ms if x.startswith("analyzer.logs")})}
    logs = {p: m for p, ms in modules.items() if p.startswith("analyzer/logs/") and (m := {x for x in ms if x.startswith("analyzer.lint")})}
    assert lint == {} and logs == {}
