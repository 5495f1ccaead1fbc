"""Go, Rust, Java, C#, Kotlin and Swift source → prompt templates, parsed with tree-sitter.

Finds string literals (:mod:`.codestrings`), ``+`` chains and format calls (Go ``fmt.Sprintf``,
Rust ``format!`` / ``write!``, Java ``String.format`` / ``.formatted`` / ``MessageFormat.format``,
C# ``string.Format`` / ``AppendFormat``, Kotlin ``String.format`` / ``.format``), whose slots
are filled by their arguments (:mod:`.formatslots`), and builders written piece by piece
(:mod:`.builders`); each interpolation, operand and argument is judged by what it calls and names
(:mod:`.codeexpr`). A literal's name is the variable, field, key, annotation or function it
belongs to; :func:`.promptlike.is_prompt` decides.

It does NOT take literals of logging, printing, errors, comparisons, imports, attributes, struct
tags or ``case`` labels, and returns None for a file that does not parse (read as text instead).
"""

from __future__ import annotations

import re

from analyzer.detection.names import Verdict, expression_parts, judge
from analyzer.lint.sources import builders, codeslots
from analyzer.lint.sources.codeexpr import CodeFile, rust_macro_args, rust_paths
from analyzer.lint.sources.codestrings import literal_pieces
from analyzer.lint.sources.formatslots import call_style, fill, node_place
from analyzer.lint.sources.grammars import SUFFIXES, parser
from analyzer.lint.sources.pieces import Piece, Template, prompt_template
from analyzer.lint.sources.promptlike import skipped_call

#: calls of these languages whose string arguments are logs, errors, lookups or code, never a prompt
_SKIP = re.compile(
    r"(?:^|\.)(?:Errorf|Printf|Println|Print|Fprintln|Fprint|Fatalf?|Fatalln|Panicf?|panic|New|Wrapf?|Infof|Debugf"
    r"|Warnf|Warningf|Tracef|Errorw|Infow|Debugw|Warnw|WriteLine|Write|Log\w*|println|eprintln|eprint|bail|anyhow"
    r"|ensure|unreachable|todo|unimplemented|expect|equals\w*|contains\w*|startsWith|endsWith|matches|Contains"
    r"|StartsWith|EndsWith|Equals|Split|IndexOf|indexOf|getProperty|Getenv|LookupEnv|GetEnvironmentVariable"
    r"|Query\w*|Exec\w*|prepareStatement|executeQuery|executeUpdate|Parse\w*|parse\w*|ofPattern|MustCompile|Compile"
    r"|Regex|IsMatch|TrimSpace|HasPrefix|HasSuffix|TrimPrefix|TrimSuffix|Header|Set|Add|Get|WithField|getLogger"
    r"|e|d|i|w|v|wtf|assert\w*|require\w*|Trim|Join|join|Sprint|Sprintln|new \w*(?:Exception|Error))$"
)
#: methods on a literal that keep it the same text: "…".trimIndent(), "…".to_string()
_KEEPS = {"to_string", "to_owned", "into", "trimIndent", "trimMargin", "stripIndent", "strip", "trim", "Trim"}
_RUST_FORMAT = {"format": 0, "format_args": 0, "write": 1, "writeln": 1}
_BINARY = ("binary_expression", "additive_expression")  # Swift's `+` is an additive_expression


def _skipped(name: str) -> bool:
    return skipped_call(name) or bool(_SKIP.search(name))


class _Finder:
    #: what joins text (:meth:`plus_chain`), writes it piece by piece and fills its slots (per family)
    binary, writers, slots = _BINARY, staticmethod(builders.templates), staticmethod(codeslots.templates)

    def __init__(self, f: CodeFile) -> None:
        self.f, self.g = f, f.g
        #: variables that hold prompt text (``p := fmt.Sprintf(…)``): judged where that text is built
        self.texts: set[str] = set()
        #: variables declared as a plain literal (``prompt := `…```), a format call's possible format:
        #: per name, each declaration (read where it is in scope: :meth:`_held_literal`)
        self.literals: dict[str, list] = {}
        for n in f.walk(f.tree.root_node):
            if n.type in f.g.decls:
                for name, value in f.decl_pairs(n):
                    if self.text_pieces(value) is not None:
                        self.texts.add(f.src(name))
                        f.declared.pop(f.src(name), None)
                        if value.type in f.g.strings:
                            self.literals.setdefault(f.src(name), []).append(value)

    # -- format calls -----------------------------------------------------------------------

    def _rust_verdict(self, text: str) -> Verdict | None:
        names, calls = expression_parts(text.replace("::", "."))
        v = judge(names, calls)
        return rust_paths(v, text) if v else self.f.held(names)

    def format_call(self, n) -> tuple[str, list[Piece]] | None:
        """(name of the call, pieces with the format slots filled) when ``n`` is a format call."""
        f, g = self.f, self.g
        if n.type == "macro_invocation" and g.name == "rust":
            name = f.dotted(n.child_by_field_name("macro") or n).rsplit(".", 1)[-1]
            if name not in _RUST_FORMAT:
                return None
            args = rust_macro_args(f, n)
            at = _RUST_FORMAT[name]
            if len(args) <= at or args[at][2].type not in g.strings:
                return None
            positional = [a for a in args[at + 1 :] if not a[0]]
            named = {a[0]: a for a in args[at + 1 :] if a[0]}

            def resolve(index, key):
                if key is not None:
                    return self._rust_verdict(named[key][1] if key in named else key)
                return (
                    self._rust_verdict(positional[index][1])
                    if index is not None and index < len(positional)
                    else None
                )

            def where(index):
                if index >= len(positional):
                    return None
                _, text, node = positional[index]
                start = f.char(node.start_byte)
                return start, f.char(node.start_byte + len(text.encode("utf-8"))), text

            pieces = literal_pieces(f, args[at][2], g.name, f.verdict)
            return (args[0][1] if at else name), fill(pieces, "rust", resolve, where)
        if n.type not in g.calls:
            return None
        dotted, owner, _ = f.call_parts(n)
        last = dotted.rsplit(".", 1)[-1]
        args = f.args(n)
        style, literal, rest = None, None, args
        formats = owner is not None and last in ("formatted", "format")
        held = (owner if owner.type in g.strings else self._held_literal(owner)) if formats else None
        if held is not None:
            style, literal = "printf", held  # "…".formatted(x), "…".format(x), PROMPT.formatted(x)
        else:
            style = call_style(dotted, g.name == "swift" and "format:" in f.src(n)[:16])
        if style is None:
            return None
        if literal is None:
            lits = [i for i, a in enumerate(args) if a.type in g.strings or self._held_literal(a) is not None]
            if not lits or lits[0] > 1:
                return None
            literal, rest = args[lits[0]], args[lits[0] + 1 :]
            literal = self._held_literal(literal) or literal  # fmt.Sprintf(prompt, now): prompt's literal

        def resolve_node(index, key):
            return f.verdict(rest[index]) if index is not None and 0 <= index < len(rest) else None

        return dotted, fill(
            literal_pieces(f, literal, g.name, f.verdict), style, resolve_node, node_place(f, rest)
        )

    def _held_literal(self, arg):
        """The literal a variable passed as a format was last declared with before it, in the same
        function (or at top level), or None."""
        decls = self.literals.get(self.f.src(arg)) if arg.type in self.g.idents else None
        if not decls:
            return None
        scope = self._function(arg)
        before = [d for d in decls if d.start_byte < arg.start_byte and self._function(d) in (scope, None)]
        return before[-1] if before else None

    def _function(self, node):
        """The id of the function holding ``node``, or None at top level."""
        while node is not None and node.type not in self.g.function_types:
            node = node.parent
        return None if node is None else node.id

    def held_formats(self) -> set[int]:
        """The nodes of the literals that format calls take through a variable: read at the call."""
        out: set[int] = set()
        for n in self.f.walk(self.f.tree.root_node):
            if n.type in self.g.calls:
                args = self.f.args(n)
                lit = next(
                    (self._held_literal(a) for a in args[:2] if self._held_literal(a) is not None), None
                )
                if lit is not None and self.format_call(n) is not None:
                    out.update(sub.id for sub in self.f.walk(lit))
        return out

    # -- text and where it stands -----------------------------------------------------------

    def text_pieces(self, node) -> list[Piece] | None:
        """Pieces of a literal, format call or literal kept as it is (``"…".to_string()``)."""
        f, g = self.f, self.g
        if node.type in g.strings:
            return literal_pieces(f, node, g.name, f.verdict)
        if node.type == "parenthesized_expression" and len(node.named_children) == 1:
            return self.text_pieces(node.named_children[0])
        formatted = self.format_call(node)
        if formatted is not None:
            return formatted[1]
        if node.type in g.calls:
            dotted, owner, _ = f.call_parts(node)
            if owner is not None and owner.type in g.strings and dotted.rsplit(".", 1)[-1] in _KEEPS:
                return literal_pieces(f, owner, g.name, f.verdict)
        return None

    def _named(self, node) -> str:
        name = node.child_by_field_name("name")
        if name is None:
            name = next((c for c in node.named_children if c.type in self.g.idents), None)
        return self.f.src(name) if name is not None else ""

    def returned_name(self, p):
        """(its function's name, False) for a literal a function returns or holds; None: read on up."""
        fn = p
        while fn is not None and fn.type not in self.g.function_types:
            fn = fn.parent
        if fn is None:
            return "", False
        return (self._named(fn), False) if self._named(fn) or p.type in self.g.returns else None

    def context(self, node) -> tuple[str, bool]:
        """(the name the code gives this text, whether it is no prompt by where it stands)."""
        f, g, cur = self.f, self.g, node
        while cur.parent is not None:
            p, t = cur.parent, cur.parent.type
            if t in g.decls:
                pairs = f.decl_pairs(p)
                return (f.src(pairs[0][0]) if pairs else self._named(p)), False
            if t in g.namers:
                named = p.child_by_field_name(g.namers[t])
                if named is not None and named != cur:
                    return f.src(named).strip("\"'`"), False
            if t == "value_argument" and len(p.children) > 2 and p.children[1].type == "=":
                return f.src(p.children[0]), False  # Kotlin: Message(content = "…")
            if t == "field_declaration" and p.child_by_field_name("tag") == cur:
                return "", True  # a Go struct tag
            if t == "expression_case" and p.child_by_field_name("value") == cur:
                return "", True
            if t in g.args:
                call = p.parent.parent if p.parent.type == "call_suffix" else p.parent  # Swift, Kotlin
                if call.type in ("annotation", "attribute", "marker_annotation"):
                    return self._named(call), False
                name = f.call_parts(call)[0] if call.type in g.calls else ""
                return name, _skipped(name)
            if t == "token_tree" and p.parent is not None and p.parent.type == "macro_invocation":
                name = f.dotted(p.parent.child_by_field_name("macro") or p.parent)
                return name, _skipped(name)
            if t in g.calls:
                dotted, owner, _ = f.call_parts(p)
                if owner is cur and _skipped(dotted):
                    return "", True  # "…".equals(x)
            if (t in g.returns or t in g.function_types) and (got := self.returned_name(p)) is not None:
                return got
            if t in _BINARY and cur in p.named_children:
                op = next((c for c in p.children if not c.is_named), None)
                if op is not None and f.src(op) != "+":
                    return "", True  # compared, not sent: x == "…"
            if t in g.skips or t in ("constant_pattern", "when_condition", "switch_label", "enum_constant"):
                return "", True
            cur = p
        return "", False

    def plus_chain(self, node) -> list:
        if node.type in _BINARY:
            op = next((c for c in node.children if not c.is_named), None)
            if op is not None and self.f.src(op) == "+" and len(node.named_children) == 2:
                left, right = node.named_children
                return self.plus_chain(left) + self.plus_chain(right)
        if node.type == "parenthesized_expression" and len(node.named_children) == 1:
            inner = node.named_children[0]
            if inner.type in _BINARY:
                return self.plus_chain(inner)
        return [node]

    def templates(self) -> list[Template]:
        f = self.f
        out: list[Template] = []
        seen: set[int] = self.held_formats() if self.literals else set()
        out += self.writers(self, seen)
        for node in f.walk(f.tree.root_node):
            if node.id in seen:
                continue
            pieces: list[Piece] | None = None
            leaves = self.plus_chain(node) if node.type in self.binary else [node]
            if len(leaves) > 1:
                texts = [self.text_pieces(leaf) for leaf in leaves]
                if any(t is not None for t in texts):
                    pieces = []
                    for leaf, text in zip(leaves, texts):
                        if text is not None:
                            pieces += text
                        else:
                            held = leaf.type in self.g.idents and f.src(leaf) in self.texts
                            verdict = None if held else f.verdict(leaf)
                            pieces.append(Piece(f.src(leaf), start=f.char(leaf.start_byte), verdict=verdict))
            elif node.type in self.g.strings:
                pieces = self.text_pieces(node)
            else:  # a format call (Ruby: ``"…" % [x]``)
                formatted = self.format_call(node)
                pieces = formatted[1] if formatted is not None else None
            if pieces is None:
                continue
            for sub in f.walk(node):
                seen.add(sub.id)
            t = prompt_template(pieces, *self.context(node), slots_count=True)
            if t is not None:
                out.append(t)
        out += self.slots(self)
        return sorted(out, key=lambda t: t.file_offset(0))


def templates(text: str, suffix: str) -> list[Template] | None:
    """The prompt templates of a Go/Rust/Java/C#/Kotlin file; None when it does not parse (or its
    grammar's wheel is missing): the caller reads it as prompt text."""
    grammar = SUFFIXES.get(suffix.lower())
    if grammar is None or parser(grammar) is None:
        return None
    try:
        f = CodeFile(text, grammar)
        return None if f.tree.root_node.has_error else _Finder(f).templates()
    except (RecursionError, TimeoutError):  # a concatenation thousands deep, or a parse given up
        return None
