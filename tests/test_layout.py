"""The package DAG the design names: imports go proxy → analyzer, never back; the emulator
uses only analyzer; kvcache stands alone (the proxy reaches it over HTTP) but for a few leaves:
``analyzer.wire`` (the OpenAI error and SSE shapes that the proxy, the emulator and the
engine's server all write, kept in one place) and ``analyzer.kv`` with ``analyzer.sizes`` (the
seeds' KV arithmetic, which the engine's start banner and benchmarks print, so the two agree).
They import no first-party module beyond each other, so the engine still pulls in nothing else
of the analyzer or the proxy. No first-party module is part of an import
cycle, and inside kvcache imports run one way (server → engine → models → layers; docs/engine.md).

Inside the proxy: accounting's write side never imports its read side (``proxy.reporting``
reads ``proxy.accounting``, never the reverse), the request's data (``proxy.exchange``) and the
money layer do not import each other even for annotations, the store and the auto-cache never
reach back into the request path, and the Gemini auto-cache is reached only through its hook.
Each name means one thing: no two proxy/analyzer modules share a file name, nor two public
classes a name, but the few listed with their reason; and no proxy/analyzer module is over
~300 lines but those listed (each to be split; an entry that is no longer over is removed).
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OURS = ("proxy", "analyzer", "kvcache")
SHARED_LEAVES = {"analyzer.wire", "analyzer.kv", "analyzer.sizes"}  # what the engine may import from outside


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
    bad = {
        p: m
        for p, ms in imports_of("analyzer").items()
        if (m := {x for x in ms if not x.startswith("analyzer")})
    }
    assert bad == {}


def test_the_emulator_imports_only_analyzer_and_itself():
    emulator = {p: ms for p, ms in imports_of("proxy").items() if p.startswith("proxy/emulator/")}
    bad = {
        p: m
        for p, ms in emulator.items()
        if (m := {x for x in ms if not x.startswith(("analyzer", "proxy.emulator"))})
    }
    assert emulator and bad == {}


def test_the_proxy_never_imports_the_engine():
    bad = {p: m for p, ms in imports_of("proxy").items() if (m := {x for x in ms if x.startswith("kvcache")})}
    assert bad == {}  # `prefixgate local` and `bench engine` are loaded by name (proxy/cli.py)


def test_the_engine_imports_neither_proxy_nor_analyzer():
    bad = {
        p: m
        for p, ms in imports_of("kvcache").items()
        if (m := {x for x in ms if not x.startswith("kvcache") and x not in SHARED_LEAVES})
    }
    assert bad == {}


def test_the_shared_wire_shapes_are_a_leaf():
    modules = imports_of("analyzer")
    assert modules["analyzer/wire.py"] == set() and modules["analyzer/sizes.py"] == set()
    assert modules["analyzer/kv.py"] == {"analyzer.sizes"}


def test_lint_and_logs_do_not_import_each_other():
    """Both read forks from analyzer.divergence; neither depends on the other (no runtime cycle)."""
    modules = imports_of("analyzer")
    lint = {
        p: m
        for p, ms in modules.items()
        if p.startswith("analyzer/lint/") and (m := {x for x in ms if x.startswith("analyzer.logs")})
    }
    logs = {
        p: m
        for p, ms in modules.items()
        if p.startswith("analyzer/logs/") and (m := {x for x in ms if x.startswith("analyzer.lint")})
    }
    assert lint == {} and logs == {}


# ── Import cycles and the engine's layers ────────────────────────────────────────────────────────────
# Module-level imports and imports inside functions alike; an ``if TYPE_CHECKING:`` body is skipped
# (annotations only: it never runs), its ``else:`` is not.

KNOWN_CYCLES: set[frozenset[str]] = set()  # proxy/analyzer cycles that exist today (none); a new one fails
ENGINE_RULES = {  # kvcache package → the kvcache packages it never imports (not even for annotations)
    "kvcache.layers": ("kvcache.engine", "kvcache.server"),
    "kvcache.models": ("kvcache.engine", "kvcache.server"),
    "kvcache.engine": ("kvcache.server",),
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.stmt) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def _imports(node: ast.AST, type_checking: bool):
    """Every Import/ImportFrom under ``node``; ``if TYPE_CHECKING:`` bodies only when ``type_checking``."""
    for child in ast.iter_child_nodes(node):
        if _is_type_checking(child) and not type_checking:
            for other in child.orelse:
                yield from _imports(ast.Module(body=[other], type_ignores=[]), type_checking)
            continue
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child
        yield from _imports(child, type_checking)


def module_graph(type_checking: bool = False) -> dict[str, set[str]]:
    """First-party module → the first-party modules it imports (``from pkg import name``: ``pkg.name``
    when that is a module, else ``pkg``; relative imports resolved)."""
    paths = {_module_name(p): p for package in OURS for p in (ROOT / package).rglob("*.py")}

    def known(name: str) -> str | None:
        while name and name not in paths:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        found: set[str | None] = set()
        for node in _imports(ast.parse(path.read_text(), str(path)), type_checking):
            if isinstance(node, ast.Import):
                found.update(known(alias.name) for alias in node.names if alias.name.split(".")[0] in OURS)
                continue
            source = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            if source.split(".")[0] in OURS:
                for alias in node.names:
                    found.add(
                        f"{source}.{alias.name}" if f"{source}.{alias.name}" in paths else known(source)
                    )
        graph[module] = {m for m in found if m and m != module}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.add(frozenset(component))
    return found


def test_the_cycle_finder_finds_cycles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert import_cycles(graph) == {frozenset("abc")}


def test_no_import_cycle_among_first_party_modules():
    new = import_cycles(module_graph()) - KNOWN_CYCLES
    assert new == set(), [sorted(c) for c in new]


def test_the_engine_has_no_import_cycle_even_through_annotations():
    """The knot this layout untied ran through one ``if TYPE_CHECKING:`` import (the step batch's)."""
    cycles = import_cycles(module_graph(type_checking=True))
    engine = [sorted(c) for c in cycles if any(m.startswith("kvcache") for m in c)]
    assert engine == []


def test_the_network_never_imports_the_engine_and_the_engine_never_imports_the_server():
    graph = module_graph(type_checking=True)
    bad = {
        module: sorted(m for m in imported if m.startswith(forbidden))
        for module, imported in graph.items()
        for package, forbidden in ENGINE_RULES.items()
        if (module == package or module.startswith(package + "."))
        and any(m.startswith(forbidden) for m in imported)
    }
    assert bad == {}


def test_engine_modules_are_short_and_say_what_they_do():
    """At most ~300 lines each, with a docstring of at most 10 lines (longer notes: docs/engine.md)."""
    long, undocumented = {}, []
    for path in sorted((ROOT / "kvcache").rglob("*.py")):
        source = path.read_text()
        doc = ast.get_docstring(ast.parse(source))
        name = str(path.relative_to(ROOT))
        if len(source.splitlines()) > 300:
            long[name] = len(source.splitlines())
        if not doc or len(doc.strip().splitlines()) > 10:
            undocumented.append(name)
    assert long == {} and undocumented == []


def test_engine_tests_share_helpers_only_through_tests_support():
    bad = {}
    for path in sorted((ROOT / "tests" / "kvcache").rglob("*.py")):
        for node in _imports(ast.parse(path.read_text(), str(path)), type_checking=True):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if any(n.startswith("tests.") and not n.startswith("tests.support") for n in names):
                bad.setdefault(str(path.relative_to(ROOT)), []).extend(names)
    assert bad == {}


# ── The proxy's own layers ───────────────────────────────────────────────────────────────────────────
REQUEST_PATH = ("proxy.app", "proxy.gate", "proxy.handler", "proxy.relay")
PROXY_RULES = {  # proxy package → the proxy modules it never imports (not even for annotations)
    "proxy.accounting": ("proxy.reporting", *REQUEST_PATH),  # the write side; proxy.reporting reads it
    "proxy.exchange": (
        "proxy.accounting.money",
        *REQUEST_PATH,
    ),  # data only: money reads it, never the reverse
    "proxy.store": (
        "proxy.exchange",
        "proxy.gemini_cache",
        *REQUEST_PATH,
    ),  # the handler starts the look-up, the relay awaits it
    "proxy.gemini_cache": REQUEST_PATH,  # behind its hook: the handler and the relay call it
    "proxy.reporting": REQUEST_PATH,
}


def test_the_proxys_layers_never_import_back():
    graph = module_graph(type_checking=True)
    bad = {
        module: sorted(m for m in imported if m.startswith(forbidden))
        for module, imported in graph.items()
        for package, forbidden in PROXY_RULES.items()
        if (module == package or module.startswith(package + "."))
        and any(m.startswith(forbidden) for m in imported)
    }
    assert bad == {}


def test_reporting_reads_accounting_and_accounting_never_reads_reporting():
    graph = module_graph(type_checking=True)
    reads = {
        m for module, imported in graph.items() if module.startswith("proxy.reporting") for m in imported
    }
    assert any(m.startswith("proxy.accounting") for m in reads)
    assert not any(
        m.startswith("proxy.reporting")
        for module, imported in graph.items()
        if module.startswith("proxy.accounting")
        for m in imported
    )


KNOWN_ANNOTATION_CYCLES = {  # cycles that run only through ``if TYPE_CHECKING:`` imports (a new one fails)
    frozenset(
        {"proxy.emulator.gemini_cached_contents", "proxy.emulator.state"}
    ),  # the handlers take the state they live in
}


def test_no_new_import_cycle_even_through_annotations():
    cycles = import_cycles(module_graph(type_checking=True)) - KNOWN_ANNOTATION_CYCLES
    assert cycles == set(), [sorted(c) for c in cycles]


def test_the_gemini_auto_cache_is_reached_only_through_its_hook():
    graph = module_graph(type_checking=True)
    bad = {
        module: sorted(
            m for m in imported if m.startswith("proxy.gemini_cache") and m != "proxy.gemini_cache.hook"
        )
        for module, imported in graph.items()
        if not module.startswith("proxy.gemini_cache")
    }
    assert {m: ms for m, ms in bad.items() if ms} == {}


# ── Names and sizes in proxy/ and analyzer/ ──────────────────────────────────────────────────────────
ROLE_NAMES = {
    "__init__",
    "app",
    "cli",
    "command",
    "config",
    "errors",
}  # one per package, by role: a package's own
SHARED_FILE_NAMES = {  # file name → why two modules still share it
    "report": "proxy/reporting/report.py is `prefixgate report`, analyzer/logs/report.py `analyze`'s: a command's report each",
}
SHARED_CLASS_NAMES = {  # public class name → why two modules still define it
    "Volatile": "analyzer/lint/bench/legacy_detect.py is a frozen copy of the old detector, kept as the benchmark's baseline",
}
MAX_LINES = 300
MAX_TRAILING_COMMENTS = 120


def _ours(*packages: str) -> list[Path]:
    return sorted(p for package in packages for p in (ROOT / package).rglob("*.py"))


def test_no_two_modules_share_a_file_name():
    by_name: dict[str, list[str]] = {}
    for path in _ours("proxy", "analyzer"):
        by_name.setdefault(path.stem, []).append(str(path.relative_to(ROOT)))
    shared = {name: paths for name, paths in by_name.items() if len(paths) > 1 and name not in ROLE_NAMES}
    assert set(shared) - set(SHARED_FILE_NAMES) == set(), shared
    assert set(SHARED_FILE_NAMES) - set(shared) == set()  # a name no longer shared leaves the list


def test_no_two_public_classes_share_a_name():
    by_name: dict[str, list[str]] = {}
    for path in _ours("proxy", "analyzer"):
        for node in ast.parse(path.read_text(), str(path)).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                by_name.setdefault(node.name, []).append(str(path.relative_to(ROOT)))
    shared = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    assert set(shared) - set(SHARED_CLASS_NAMES) == set(), shared
    assert set(SHARED_CLASS_NAMES) - set(shared) == set()


def test_no_module_is_over_300_lines():
    """Every module of the three packages at most :data:`MAX_LINES` lines: split a long one along a seam."""
    long = {
        str(p.relative_to(ROOT)): n
        for p in _ours("proxy", "analyzer", "kvcache")
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


def _trailing_comments(path: Path) -> int:
    """Comments on a line that also holds code (``x = 1  # why``); pragmas such as
    ``# type: ignore`` and ``# noqa`` count as code."""
    count, code_lines = 0, set()
    skip = {
        tokenize.NL,
        tokenize.NEWLINE,
        tokenize.INDENT,
        tokenize.DEDENT,
        tokenize.ENCODING,
        tokenize.COMMENT,
    }
    for tok in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
        if tok.type == tokenize.COMMENT:
            pragma = tok.string.lstrip("# ").startswith(("type:", "noqa", "pragma:", "fmt:"))
            count += tok.start[0] in code_lines and not pragma
        elif tok.type not in skip:
            code_lines.update(range(tok.start[0], tok.end[0] + 1))
    return count


def test_the_proxy_says_why_in_names_and_docstrings_not_trailing_comments():
    """About httpx's level (~110 trailing comments in a package of this size): a reason becomes a
    name, a named constant, a docstring line or a comment line above the code."""
    per_module = {str(p.relative_to(ROOT)): n for p in _ours("proxy") if (n := _trailing_comments(p))}
    assert sum(per_module.values()) <= MAX_TRAILING_COMMENTS, sorted(
        per_module.items(), key=lambda kv: -kv[1]
    )
