"""A Python file parsed for :mod:`.python`: ``ast`` nodes, exact character offsets, verdicts.

:class:`PyFile` holds the tree, each node's parent, the STRING tokens with their offsets
(``ast`` columns are UTF-8 byte offsets; tokens are decoded by :mod:`.pystrings`), the
docstrings, and what simple assignments pass on (``stamp = datetime.now()``); it judges an
expression by what it calls and names (:func:`analyzer.detection.names.judge`).

It does NOT decide which expressions are prompt templates (:mod:`.python` does).
"""

from __future__ import annotations

import ast
import bisect
import io
import re
import tokenize

from analyzer.detection.names import Verdict, config_container, judge, words
from analyzer.detection.owners import owned_field
from analyzer.lint.sources.pieces import Piece
from analyzer.lint.sources.pystrings import lex


def dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{dotted(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return dotted(node.func)
    return "?"


class PyFile:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tree = ast.parse(text)
        # lines as ast and tokenize count them: ended by \r\n, \r or \n
        self.lines = re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text) or [""]
        self.line_starts = [0]
        for line in self.lines:
            self.line_starts.append(self.line_starts[-1] + len(line))
        self.parents: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(self.tree):
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node
        #: (start, end, text) of every STRING token
        self.tokens: list[tuple[int, int, str]] = []
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.STRING:
                self.tokens.append((self.offset(*tok.start), self.offset(*tok.end), tok.string))
        self.token_starts = [t[0] for t in self.tokens]
        self.docstrings = {
            id(b[0].value)
            for n in ast.walk(self.tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            for b in [n.body]
            if b and isinstance(b[0], ast.Expr) and isinstance(b[0].value, (ast.Constant, ast.JoinedStr))
        }
        self.assigned: dict[str, Verdict] = {}
        for node in sorted(
            (n for n in ast.walk(self.tree) if isinstance(n, (ast.Assign, ast.AnnAssign))),
            key=lambda n: n.lineno,
        ):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if (
                node.value is not None
                and len(targets) == 1
                and isinstance(targets[0], ast.Name)
                and not is_text(node.value)
            ):
                v = self.verdict(node.value, calls_only=True) or self.derived(node.value)
                if v:
                    self.assigned[targets[0].id] = v

    def derived(self, value: ast.AST) -> Verdict | None:
        """A call on or of a volatile variable passes it on: ``slot = next_slot(now)``, ``s = now.strftime(…)``."""
        if not isinstance(value, ast.Call):
            return None
        func = value.func
        inputs = [*value.args, *(k.value for k in value.keywords)]
        while isinstance(func, ast.Attribute):
            func = func.value
        for n in [func, *inputs]:
            if isinstance(n, ast.Name) and n.id in self.assigned:
                return Verdict(
                    f"is computed from `{n.id}`, which {self.assigned[n.id].reason}",
                    self.assigned[n.id].severity,
                )
        return None

    def offset(self, line: int, col: int) -> int:
        return self.line_starts[line - 1] + col

    def node_span(self, node: ast.AST) -> tuple[int, int]:
        def char_col(line: int, col: int) -> int:
            s = self.lines[line - 1]
            return col if s.isascii() else len(s.encode("utf-8")[:col].decode("utf-8", "replace"))

        return (
            self.offset(node.lineno, char_col(node.lineno, node.col_offset)),
            self.offset(node.end_lineno, char_col(node.end_lineno, node.end_col_offset)),
        )

    def verdict(self, node: ast.AST, calls_only: bool = False) -> Verdict | None:
        """Why an expression is volatile. ``calls_only``: only by what it calls (what an assignment
        passes on: ``stamp = datetime.now()`` does, ``season = SEASONS[today.month]`` does not)."""
        names: list[str] = []
        calls: list[tuple[str, int | None]] = []
        for n in ast.walk(node):
            if isinstance(n, ast.Call):
                calls.append((dotted(n.func), len(n.args) + len(n.keywords)))
                if isinstance(n.func, ast.Attribute) and n.func.attr == "get" and n.args:
                    names += _key(n.args[0], n.func.value)  # msg.get("user_id"): named by its key
            elif isinstance(n, ast.Name):
                names.append(n.id)
            elif isinstance(n, ast.Attribute):
                names.append(n.attr)
                if isinstance(n.value, ast.Name):
                    names.append(f"{n.value.id}.{n.attr}")  # user.name: the owner's words with the field's
            elif isinstance(n, ast.Subscript):
                names += _key(n.slice, n.value)
        if names and self.loop_item(node):
            names = []  # `for memory in memories: … {memory}`: one item of a list, not the request's own value
        v = judge([] if calls_only else names, calls)
        if v or calls_only:
            return v
        for name in names:
            if name in self.assigned:
                return Verdict(
                    f"`{name}` holds a value that {self.assigned[name].reason}", self.assigned[name].severity
                )
        return None

    def loop_item(self, node: ast.AST) -> bool:
        """``node`` reads a variable of a loop or comprehension around it (an item of a list)."""
        root = node
        while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
            root = root.func if isinstance(root, ast.Call) else root.value
        if not isinstance(root, ast.Name):
            return False
        p = self.parents.get(node)
        while p is not None:
            if isinstance(p, (ast.For, ast.AsyncFor)):
                targets = [p.target]
            elif isinstance(p, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
                targets = [g.target for g in p.generators]
            else:
                targets = []
            if any(isinstance(n, ast.Name) and n.id == root.id for t in targets for n in ast.walk(t)):
                return True
            p = self.parents.get(p)
        return False

    def literal_pieces(self, node: ast.AST) -> list[Piece] | None:
        a, b = self.node_span(node)
        k = bisect.bisect_left(self.token_starts, a)
        pieces: list[Piece] = []
        while k < len(self.tokens) and self.tokens[k][1] <= b:
            got = lex(self.tokens[k][2], self.tokens[k][0])
            if got is None:
                return None
            pieces += got
            k += 1
        if isinstance(node, ast.JoinedStr):
            fields = [v for v in node.values if isinstance(v, ast.FormattedValue)]
            slots = [p for p in pieces if not p.literal]
            for p, f in zip(slots, fields if len(fields) == len(slots) else [None] * len(slots)):
                p.verdict = self.verdict(f.value) if f is not None else None
        return pieces

    def interpolation(self, node: ast.AST) -> Piece:
        return self.interpolation_with(node, self.verdict(node))

    def interpolation_with(self, node: ast.AST, verdict: Verdict | None) -> Piece:
        a, b = self.node_span(node)
        return Piece(self.text[a:b], start=a, verdict=verdict)


def _key(node: ast.AST, owner: ast.AST) -> list[str]:
    """A string key (``["user_id"]``, ``.get("user_id")``) as a name, unless looked up in
    configuration (``settings["user_id"]``, ``os.environ.get("USER_ID")``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
        chain = _chain(owner)
        if config_container(" ".join(chain)):
            return []
        field = ".".join([*reversed(chain), node.value]) if chain else ""
        return [field if field and owned_field(field, words) else node.value]  # perfil["nome"]: the user's
    return []


def _chain(node: ast.AST) -> list[str]:
    """The identifiers of an owner chain: ``self.config["a"]`` → ["self", "config"]."""
    out = []
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        if isinstance(node, ast.Attribute):
            out.append(node.attr)
        node = node.func if isinstance(node, ast.Call) else node.value
    if isinstance(node, ast.Name):
        out.append(node.id)
    return out


def is_text(node: ast.AST) -> bool:
    """A string, template or concatenation: its own values are reported where it stands, not passed on."""
    return is_str(node) or (isinstance(node, ast.BinOp) and (is_text(node.left) or is_text(node.right)))


def is_str(node: ast.AST) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))
