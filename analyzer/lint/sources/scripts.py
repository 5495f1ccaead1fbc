"""PHP and Ruby source → prompt templates, on the tree-sitter pipeline of :mod:`.compiled`.

Finds string literals (:mod:`.scriptstrings`), concatenations (PHP ``.``, Ruby ``+``), format calls
(PHP ``sprintf`` / ``vsprintf``, Ruby ``format`` / ``sprintf`` / ``"…" % [x]`` / ``"…" % {k: x}``),
whose slots are filled by their arguments (:mod:`.formatslots`), texts written piece by piece
(``$p .= …``, ``p << …``, ``p += …``) and slot replacements (``str_replace('{{date}}', $v, $t)``,
``t.gsub('{{date}}', v)``: :mod:`.scriptbuild`); each value is judged by :mod:`.scriptexpr`.

It does NOT read ``echo``/``puts``/log/error/SQL text or array keys (:mod:`.scriptcontext`), ERB or
Blade templates, and returns None (read as text instead) for a file that does not parse and for a
PHP file that only returns an array of plain literals.
"""

from __future__ import annotations

from analyzer.lint.sources import scriptbuild
from analyzer.lint.sources.compiled import _Finder
from analyzer.lint.sources.formatslots import fill, node_place
from analyzer.lint.sources.grammars import GRAMMARS, parser
from analyzer.lint.sources.pieces import Piece, Template
from analyzer.lint.sources.scriptbuild import FORMATS
from analyzer.lint.sources.scriptcontext import KEEPS, context
from analyzer.lint.sources.scriptexpr import ScriptFile
from analyzer.lint.sources.scriptstrings import interpolations, literal_pieces

SUFFIXES = {".php": "php", ".rb": "ruby"}
_STYLES = {"php": "printf", "ruby": "ruby"}
_JOINS = {"php": ".", "ruby": "+"}
_PARENS = ("parenthesized_expression", "parenthesized_statements")


def _operator(f, node) -> str:
    op = node.child_by_field_name("operator")
    return f.src(op) if op is not None else ""


class _ScriptFinder(_Finder):
    binary = frozenset(("binary_expression", "binary"))
    writers, slots = staticmethod(scriptbuild.templates), staticmethod(scriptbuild.slots)

    def literal(self, node) -> list[Piece]:
        return literal_pieces(self.f, node, self.f.verdict)

    def _format(self, n):
        """(callee, format literal node, argument nodes, style) of a format call, or None."""
        f, g = self.f, self.g
        if n.type == "binary" and _operator(f, n) == "%" and g.name == "ruby":
            left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
            literal = left if left is not None and left.type in g.strings else self._held_literal(left)
            if literal is None or right is None:
                return None
            values = right.named_children if right.type in ("array", "hash") else [right]
            return "%", literal, values, "ruby"
        if n.type not in g.calls:
            return None
        dotted = f.call_parts(n)[0]
        if dotted not in FORMATS[g.name]:
            return None
        args = f.args(n)
        if not args:
            return None
        literal = args[0] if args[0].type in g.strings else self._held_literal(args[0])
        if literal is None:
            return None
        rest = args[1:]
        if dotted == "vsprintf" and rest and rest[0].type == "array_creation_expression":
            rest = [c.named_children[-1] for c in rest[0].named_children if c.named_children]
        return dotted, literal, rest, _STYLES[g.name]

    def format_call(self, n) -> tuple[str, list[Piece]] | None:
        found = self._format(n)
        if found is None:
            return None
        dotted, literal, rest, style = found
        f = self.f
        named = {}
        for a in rest:
            if a.type == "pair" and a.child_by_field_name("key") is not None:
                named[f.src(a.child_by_field_name("key")).strip("\"':")] = a.child_by_field_name("value")
        rest = [a for a in rest if a.type != "pair"]

        def resolve(index, key):
            if key is not None:
                return f.verdict(named[key]) if named.get(key) is not None else None
            return f.verdict(rest[index]) if index is not None and 0 <= index < len(rest) else None

        return dotted, fill(self.literal(literal), style, resolve, node_place(f, rest))

    def text_pieces(self, node) -> list[Piece] | None:
        """Pieces of a literal, format call, or literal kept as it is (``trim("…")``, ``"…".freeze``)."""
        f, g = self.f, self.g
        if node.type in g.strings:
            return self.literal(node) if node.is_named else None  # PHP's `string` type is no literal
        if node.type in _PARENS and len(node.named_children) == 1:
            return self.text_pieces(node.named_children[0])
        formatted = self.format_call(node)
        if formatted is not None:
            return formatted[1]
        if node.type in g.calls:
            dotted, owner, _ = f.call_parts(node)
            args = f.args(node)
            if dotted.rsplit(".", 1)[-1] in KEEPS:
                if owner is not None and owner.type in g.strings:
                    return self.literal(owner)  # "…".strip, <<~EOS.freeze
                if owner is None and args and args[0].type in g.strings:
                    return self.literal(args[0])  # trim(<<<EOT … EOT)
        return None

    def context(self, node) -> tuple[str, bool]:
        return context(self, node)

    def plus_chain(self, node) -> list:
        if node.type in self.binary and _operator(self.f, node) == _JOINS[self.g.name]:
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is not None and right is not None:
                return self.plus_chain(left) + self.plus_chain(right)
        if node.type in _PARENS and len(node.named_children) == 1:
            inner = node.named_children[0]
            if inner.type in self.binary and _operator(self.f, inner) == _JOINS[self.g.name]:
                return self.plus_chain(inner)
        return [node]


_HEAD = ("php_tag", "comment", "namespace_definition", "namespace_use_declaration", "declare_statement")
_CODE = frozenset(("variable_name", "encapsed_string", "heredoc")) | GRAMMARS["php"].calls


def data_file(f: ScriptFile) -> bool:
    """A PHP file that only returns an array of plain literals (``return ['system' => '…'];``): data,
    like a YAML or JSON prompt file, read as text."""
    body = [n for n in f.tree.root_node.named_children if n.type not in _HEAD]
    if (
        f.g.name != "php"
        or len(body) != 1
        or body[0].type != "return_statement"
        or not body[0].named_children
    ):
        return False
    value = body[0].named_children[0]
    if value.type == "assignment_expression":  # return $prompts = [...]
        value = value.child_by_field_name("right")
    if value is None or value.type != "array_creation_expression":
        return False
    return not any(n.type in _CODE and not _plain(f, n) for n in f.walk(value))


def _plain(f, node) -> bool:
    """A double-quoted literal or heredoc with nothing interpolated."""
    return node.type in ("encapsed_string", "heredoc") and not interpolations(f, node)


def templates(text: str, suffix: str) -> list[Template] | None:
    """The prompt templates of a PHP or Ruby file; None when it does not parse, is a PHP data file
    (:func:`data_file`) or its grammar's wheel is missing: the caller reads it as prompt text."""
    grammar = SUFFIXES.get(suffix.lower())
    if grammar is None or parser(grammar) is None:
        return None
    try:
        f = ScriptFile(text, grammar)
        if f.tree.root_node.has_error or data_file(f):
            return None
        found = _ScriptFinder(f).templates()
        for t in found:
            t.plain = "$"  # interpolation is the parser's: a "$" left in literal text is plain text
        return found
    except (RecursionError, TimeoutError):  # a concatenation thousands deep, or a parse given up
        return None
