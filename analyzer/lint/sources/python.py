"""Python source → prompt templates: which expressions of a :class:`.pyfile.PyFile` are prompts.

Finds string literals, f-strings, ``.format`` and ``%`` templates and ``+`` chains; each
interpolation is judged by what it calls and names, following simple assignments in the file
(:mod:`.pyfile` holds the parsed file and its exact offsets).

It does NOT read files, or take docstrings, bytes and non-prompt literals (:mod:`.promptlike`);
invalid Python raises :class:`SyntaxError`.
"""

from __future__ import annotations

import ast
import re

from analyzer.detection.names import Verdict
from analyzer.lint.sources.pieces import Piece, Template, folded, prompt_template
from analyzer.lint.sources.promptlike import skipped_call
from analyzer.lint.sources.pyfile import PyFile, dotted, is_str
from analyzer.lint.sources.pyrepair import WRAPPER, mend
from analyzer.lint.sources.pyslots import prompt_vars, slot_templates

_FORMAT_FIELD = re.compile(r"\{\{|\}\}|\{([^{}!:]*)(?:![rsa])?(?::[^{}]*)?\}")
#: two words in a row: a strftime format that is prose, not only directives
_WORDS = re.compile(r"[^\W\d_]{2,}\s+[^\W\d_]{2,}")
#: how many mends an excerpt may need ([…] lines, an indented start, a cut-off string)
_MENDS = 8
_PERCENT = re.compile(r"%%|%(?:\((\w+)\))?[#0 +-]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[diouxXeEfFgGcrsa]")


def _split(pieces: list[Piece], pattern: re.Pattern, fill) -> list[Piece]:
    """Literal pieces with each ``pattern`` match that ``fill(match, n)`` gives a Verdict for cut out
    as an interpolation; ``fill`` returns (verdict, where the positional argument filling it stands)."""
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
            v, filled_by = fill(m, n)
            n += 1
            if v is None:
                continue
            if m.start() > at:
                out.append(Piece(p.text[at : m.start()], p.offsets[at : m.start()] + [p.offsets[m.start()]]))
            out.append(Piece(m.group(0), start=p.offsets[m.start()], verdict=v, filled_by=filled_by))
            at = m.end()
        out.append(Piece(p.text[at:], p.offsets[at:]) if at else p)
    return [p for p in out if p.text or not p.literal]


class _Finder:
    def __init__(self, f: PyFile) -> None:
        self.f = f
        self.handled: set[int] = set()
        self.pvars = prompt_vars(f)

    def context(self, node: ast.AST) -> tuple[str, bool]:
        """(the name the code gives this text, whether it is an argument of a call that is no prompt)."""
        f, cur = self.f, node
        while True:
            p = f.parents.get(cur)
            if p is None or isinstance(p, (ast.Module, ast.Expr)):
                return "", p is None or isinstance(p, ast.Expr)
            if isinstance(p, ast.Call):
                if cur is p.func or (
                    isinstance(p.func, ast.Attribute) and p.func.attr == "join" and is_str(p.func.value)
                ):
                    cur = p  # "\n".join([...]): its parts are the text the join stands for
                    continue
                name = dotted(p.func)
                if (
                    name.endswith("strftime")
                    and isinstance(cur, ast.Constant)
                    and _WORDS.search(str(cur.value))
                ):
                    return f"{name} (template)", False  # now.strftime("The current date is %Y-%m-%d.")
                return name, skipped_call(name) or isinstance(f.parents.get(p), ast.Raise)
            if isinstance(p, ast.keyword):
                call = f.parents.get(p)
                return p.arg or "", isinstance(call, ast.Call) and skipped_call(dotted(call.func))
            if isinstance(p, ast.AugAssign) and isinstance(p.target, ast.Name) and p.target.id in self.pvars:
                return f"{p.target.id} (prompt)", False
            if isinstance(p, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = p.targets if isinstance(p, ast.Assign) else [p.target]
                return " ".join(
                    dotted(t) if not isinstance(t, ast.Subscript) else ast.unparse(t) for t in targets
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
            if not any(is_str(x) for x in leaves):
                return None
            pieces: list[Piece] = []
            for leaf in leaves:
                got = (
                    self.template(leaf)
                    if is_str(leaf) or isinstance(leaf, (ast.Call, ast.BinOp)) and self.is_template(leaf)
                    else None
                )
                pieces += got if got is not None else [f.interpolation(leaf)]
            return pieces
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and is_str(node.left):
            pieces = f.literal_pieces(node.left)
            right = node.right
            elts = right.elts if isinstance(right, ast.Tuple) else [right]
            named = (
                {k.value: v for k, v in zip(right.keys, right.values) if isinstance(k, ast.Constant)}
                if isinstance(right, ast.Dict)
                else {}
            )

            def fill(m: re.Match, n: int) -> tuple[Verdict | None, tuple[int, int, str] | None]:
                if m.group(1):
                    return f.verdict(named[m.group(1)]) if m.group(1) in named else None, None
                target = elts[n] if n < len(elts) and not named else None
                return (f.verdict(target), self.span(target)) if target is not None else (None, None)

            return _split(pieces, _PERCENT, fill) if pieces is not None else None
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format"
            and is_str(node.func.value)
        ):
            pieces = f.literal_pieces(node.func.value)
            kw = {k.arg: k.value for k in node.keywords if k.arg}
            auto = iter(range(len(node.args)))

            def fill(m: re.Match, n: int) -> tuple[Verdict | None, tuple[int, int, str] | None]:
                field = re.split(r"[.\[]", m.group(1) or "")[0]
                if field == "":
                    idx = next(auto, None)
                    target = node.args[idx] if idx is not None else None
                elif field.isdigit():
                    target = node.args[int(field)] if int(field) < len(node.args) else None
                else:
                    target = kw.get(field)
                    return (f.verdict(target) if target is not None else None), None
                return (f.verdict(target), self.span(target)) if target is not None else (None, None)

            return _split(pieces, _FORMAT_FIELD, fill) if pieces is not None else None
        if is_str(node) and id(node) not in f.docstrings:
            return f.literal_pieces(node)
        return None

    def span(self, node: ast.AST) -> tuple[int, int, str]:
        """Where an argument stands in the file, and its text."""
        a, b = self.f.node_span(node)
        return a, b, self.f.text[a:b]

    def is_template(self, node: ast.AST) -> bool:
        return (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and is_str(node.left)) or (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format"
            and is_str(node.func.value)
        )

    def templates(self) -> list[Template]:
        out: list[Template] = []
        for node in ast.walk(self.f.tree):
            if id(node) in self.handled:
                continue
            if not (
                is_str(node)
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
            t = prompt_template(pieces, *self.context(node), slots_count=True)
            if t is not None:
                out.append(t)
        out = folded(out)
        out += slot_templates(self.f, self.pvars)
        return sorted(out, key=lambda t: t.file_offset(0))


def templates(text: str) -> list[Template]:
    """The prompt templates of a Python file's text (raises :class:`SyntaxError`); an excerpt
    that does not parse as it stands is mended first (:mod:`.pyrepair`)."""
    src, wrapped = text, False
    for _ in range(_MENDS + 1):  # the text as it is, then up to _MENDS mends
        try:
            found = _Finder(PyFile(src)).templates()
        except SyntaxError as exc:
            mended = mend(src, exc, wrapped)
            if mended is None:
                break
            src, wrapped = mended
            continue
        return [_shifted(t, -len(WRAPPER)) for t in found] if wrapped else found
    return _Finder(PyFile(text)).templates()  # not mendable: the text's own error


def _shifted(t: Template, by: int) -> Template:
    for p in t.pieces:
        if p.offsets is not None:
            p.offsets = [o + by for o in p.offsets]
        else:
            p.start += by
    return t
