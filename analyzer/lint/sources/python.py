"""Python source → prompt templates: ``ast`` for the structure, ``tokenize`` for exact places.

Finds string literals, f-strings, ``.format`` and ``%`` templates and ``+`` chains; each
interpolation is judged by what it calls and names (:func:`analyzer.detection.names.judge`),
following simple assignments in the file. ``ast`` columns are UTF-8 byte offsets; string tokens
are decoded by :mod:`.pystrings`, each character keeping its source offset (an escape maps to
its backslash).

It does NOT read files, or take docstrings, bytes and non-prompt literals (:mod:`.promptlike`);
invalid Python raises :class:`SyntaxError`.
"""

from __future__ import annotations

import ast
import bisect
import io
import re
import tokenize

from analyzer.detection.names import Verdict, judge
from analyzer.lint.sources.pieces import Piece, Template
from analyzer.lint.sources.promptlike import is_prompt, skipped_call
from analyzer.lint.sources.pystrings import lex

_FORMAT_FIELD = re.compile(r"\{\{|\}\}|\{([^{}!:]*)(?:![rsa])?(?::[^{}]*)?\}")
_PERCENT = re.compile(r"%%|%(?:\((\w+)\))?[#0 +-]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[diouxXeEfFgGcrsa]")


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    return "?"


class _File:
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
                and not _is_text(node.value)
            ):
                v = self.verdict(node.value, calls_only=True)
                if v:
                    self.assigned[targets[0].id] = v

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
                calls.append((_dotted(n.func), len(n.args) + len(n.keywords)))
            elif isinstance(n, ast.Name):
                names.append(n.id)
            elif isinstance(n, ast.Attribute):
                names.append(n.attr)
        v = judge([] if calls_only else names, calls)
        if v or calls_only:
            return v
        for name in names:
            if name in self.assigned:
                return Verdict(
                    f"`{name}` holds a value that {self.assigned[name].reason}", self.assigned[name].severity
                )
        return None

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
        a, b = self.node_span(node)
        return Piece(self.text[a:b], start=a, verdict=self.verdict(node))


def _is_text(node: ast.AST) -> bool:
    """A string, template or concatenation: its own values are reported where it stands, not passed on."""
    return _is_str(node) or (isinstance(node, ast.BinOp) and (_is_text(node.left) or _is_text(node.right)))


def _is_str(node: ast.AST) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))


def _split(pieces: list[Piece], pattern: re.Pattern, fill) -> list[Piece]:
    """Literal pieces with each ``pattern`` match that ``fill(match, n)`` gives a Verdict for cut out as an interpolation."""
    out: list[Piece] = []
    n = 0
    for p in pieces:
        if not p.literal:
            out.append(p)
            continue
        at = 0
        for m in pattern.finditer(p.text):
            if m.group(0) in ("%%", "{{", "}}"):
                continue
            v = fill(m, n)
            n += 1
            if v is None:
                continue
            if m.start() > at:
                out.append(Piece(p.text[at : m.start()], p.offsets[at : m.start()] + [p.offsets[m.start()]]))
            out.append(Piece(m.group(0), start=p.offsets[m.start()], verdict=v))
            at = m.end()
        out.append(Piece(p.text[at:], p.offsets[at:]) if at else p)
    return [p for p in out if p.text or not p.literal]


class _Finder:
    def __init__(self, f: _File) -> None:
        self.f = f
        self.handled: set[int] = set()

    def context(self, node: ast.AST) -> tuple[str, bool]:
        """(the name the code gives this text, whether it is an argument of a call that is no prompt)."""
        f, cur = self.f, node
        while True:
            p = f.parents.get(cur)
            if p is None or isinstance(p, (ast.Module, ast.Expr)):
                return "", p is None or isinstance(p, ast.Expr)
            if isinstance(p, ast.Call):
                if cur is p.func:
                    cur = p
                    continue
                name = _dotted(p.func)
                return name, skipped_call(name) or isinstance(f.parents.get(p), ast.Raise)
            if isinstance(p, ast.keyword):
                call = f.parents.get(p)
                return p.arg or "", isinstance(call, ast.Call) and skipped_call(_dotted(call.func))
            if isinstance(p, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = p.targets if isinstance(p, ast.Assign) else [p.target]
                return " ".join(
                    _dotted(t) if not isinstance(t, ast.Subscript) else ast.unparse(t) for t in targets
                ), False
            if isinstance(p, ast.Dict) and cur in p.values:
                key = p.keys[p.values.index(cur)]
                return (
                    key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else ""
                ), False
            if (
                isinstance(p, ast.Tuple)
                and p.elts
                and p.elts[0] is not cur
                and isinstance(p.elts[0], ast.Constant)
            ):
                return str(p.elts[0].value), False
            if isinstance(p, ast.Return):
                fn = p
                while fn is not None and not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    fn = f.parents.get(fn)
                return (fn.name if fn is not None else ""), False
            if isinstance(p, ast.Raise):
                return "", True
            if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                return "", False
            cur = p

    def template(self, node: ast.AST) -> list[Piece] | None:
        f = self.f
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            leaves: list[ast.AST] = []
            stack = [node]
            while stack:
                n = stack.pop()
                if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add):
                    stack += [n.right, n.left]
                else:
                    leaves.append(n)
            if not any(_is_str(x) for x in leaves):
                return None
            pieces: list[Piece] = []
            for leaf in leaves:
                got = (
                    self.template(leaf)
                    if _is_str(leaf) or isinstance(leaf, (ast.Call, ast.BinOp)) and self.is_template(leaf)
                    else None
                )
                pieces += got if got is not None else [f.interpolation(leaf)]
            return pieces
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and _is_str(node.left):
            pieces = f.literal_pieces(node.left)
            right = node.right
            elts = right.elts if isinstance(right, ast.Tuple) else [right]
            named = (
                {k.value: v for k, v in zip(right.keys, right.values) if isinstance(k, ast.Constant)}
                if isinstance(right, ast.Dict)
                else {}
            )

            def fill(m: re.Match, n: int) -> Verdict | None:
                target = (
                    named.get(m.group(1))
                    if m.group(1)
                    else (elts[n] if n < len(elts) and not named else None)
                )
                return f.verdict(target) if target is not None else None

            return _split(pieces, _PERCENT, fill) if pieces is not None else None
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format"
            and _is_str(node.func.value)
        ):
            pieces = f.literal_pieces(node.func.value)
            kw = {k.arg: k.value for k in node.keywords if k.arg}
            auto = iter(range(len(node.args)))

            def fill(m: re.Match, n: int) -> Verdict | None:
                field = re.split(r"[.\[]", m.group(1) or "")[0]
                if field == "":
                    idx = next(auto, None)
                    target = node.args[idx] if idx is not None else None
                elif field.isdigit():
                    target = node.args[int(field)] if int(field) < len(node.args) else None
                else:
                    target = kw.get(field)
                return f.verdict(target) if target is not None else None

            return _split(pieces, _FORMAT_FIELD, fill) if pieces is not None else None
        if _is_str(node) and id(node) not in f.docstrings:
            return f.literal_pieces(node)
        return None

    def is_template(self, node: ast.AST) -> bool:
        return (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and _is_str(node.left)) or (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format"
            and _is_str(node.func.value)
        )

    def templates(self) -> list[Template]:
        out: list[Template] = []
        for node in ast.walk(self.f.tree):
            if id(node) in self.handled:
                continue
            if not (
                _is_str(node)
                or isinstance(node, ast.BinOp)
                and isinstance(node.op, (ast.Add, ast.Mod))
                or self.is_template(node)
            ):
                continue
            pieces = self.template(node)
            if pieces is None:
                continue
            for sub in ast.walk(node):
                self.handled.add(id(sub))
            name, skip = self.context(node)
            t = Template([p for p in pieces if p.text], name)
            if t.pieces and not skip and is_prompt(t.literal_text, name, t.interpolated):
                out.append(t)
        return sorted(out, key=lambda t: t.file_offset(0))


def templates(text: str) -> list[Template]:
    """The prompt templates of a Python file's text (raises :class:`SyntaxError`)."""
    return _Finder(_File(text)).templates()
