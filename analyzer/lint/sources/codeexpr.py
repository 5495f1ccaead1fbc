"""Go, Rust, Java, C# and Kotlin expressions: their calls, arguments, and why one is volatile.

:class:`CodeFile` parses a file with its :class:`~.grammars.Grammar` and judges an expression
by the calls and names in it (:func:`analyzer.detection.names.judge`), following declarations
(``now := time.Now()``), C#'s clock properties (``DateTime.Now``) and Rust macros' tokens. A
member chain rooted at a package or type (``time.RFC3339``, ``Locale.US``) names nothing.

It does NOT find literals or decide what is a prompt (:mod:`.compiled`).
"""

from __future__ import annotations

import re

from analyzer.detection.names import Verdict, call_verdict, config_container, expression_parts, judge
from analyzer.lint.sources.codestrings import INTERPOLATIONS
from analyzer.lint.sources.grammars import GRAMMARS, parser
from analyzer.lint.sources.treetext import TreeText

_SIMPLE = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")
_PATH = re.compile(r"\w+(?:::\w+)+")
_INDEX = ("index_expression", "element_access_expression", "indexing_expression")


def rust_paths(v: Verdict, expr: str) -> Verdict:
    """The verdict naming Rust's paths as written: ``Utc::now()``, not ``Utc.now()``."""
    reason = v.reason
    for path in _PATH.findall(expr):
        reason = reason.replace(path.replace("::", "."), path)
    return Verdict(reason, v.severity)


class CodeFile(TreeText):
    def __init__(self, text: str, grammar: str) -> None:
        super().__init__(text, parser(grammar))
        self.g = GRAMMARS[grammar]
        self.packages: set[str] = set()
        self.declared: dict[str, Verdict] = {}
        for n in self.walk(self.tree.root_node):
            if n.type == "import_spec":
                alias, path = n.child_by_field_name("name"), n.child_by_field_name("path")
                if alias is not None:
                    self.packages.add(self.src(alias))
                elif path is not None:
                    self.packages.add(self.src(path).strip('"`').rsplit("/", 1)[-1])
            elif n.type in self.g.decls:
                for name, value in self.decl_pairs(n):
                    if value.type not in self.g.strings and value.type != "binary_expression":
                        v = self.verdict(value, calls_only=True)
                        if v:
                            self.declared[self.src(name)] = v

    def decl_pairs(self, n) -> list[tuple]:
        """(name node, value node) of a declaration (Go's ``a, b := x, y`` pairs by position)."""
        name_field, value_field = self.g.decls[n.type]
        if name_field:
            name, value = n.child_by_field_name(name_field), n.child_by_field_name(value_field or "value")
        else:
            name = next(
                (c for c in n.named_children if c.type in ("variable_declaration", "identifier")), None
            )
            value = n.named_children[-1] if n.named_children else None
        if name is not None and name.type == "variable_declaration":
            name = name.named_children[0] if name.named_children else None
        if value is None or value.type == "expression_list" and not value.named_children:
            value = None
        if not value_field and n.type == "variable_declarator" and n.named_children:
            value = n.named_children[-1] if len(n.named_children) > 1 else None
        if name is None or value is None or name is value:
            return []
        if name.type == "expression_list" and value.type == "expression_list":
            return list(zip(name.named_children, value.named_children))
        if value.type == "expression_list" and len(value.named_children) == 1:
            value = value.named_children[0]
        return [(name, value)]

    def member_parts(self, node) -> tuple:
        """(owner, member) of ``a.b`` / ``a::b``."""
        owner_field, member_field = self.g.members[node.type]
        if owner_field:
            return node.child_by_field_name(owner_field), node.child_by_field_name(member_field)
        named = node.named_children
        return (named[0], named[-1]) if len(named) >= 2 else (None, None)

    def args(self, call) -> list:
        """The argument expressions of a call (named arguments' values)."""
        lst = call.child_by_field_name("arguments")
        if lst is None:
            kids = [k for c in call.children for k in (c.children if c.type == "call_suffix" else (c,))]
            lst = next((c for c in kids if c.type in self.g.args), None)  # Swift/Kotlin: inside call_suffix
        if lst is None:
            return []
        out = []
        for a in lst.named_children:
            if "comment" in a.type:  # line_comment, block_comment: between arguments, not one
                continue
            if a.type in ("argument", "value_argument", "attribute_argument"):
                inner = a.named_children
                a = inner[-1] if inner else a
            out.append(a)
        return out

    def call_parts(self, call) -> tuple[str, object, object]:
        """(dotted callee, owner node or None, member/name node or None)."""
        if call.type == "object_creation_expression":
            t = call.child_by_field_name("type")
            return ("new " + self.dotted(t) if t is not None else "new"), None, None
        if call.type == "method_invocation":
            owner, name = call.child_by_field_name("object"), call.child_by_field_name("name")
            dotted = (self.dotted(owner) + "." if owner is not None else "") + self.src(name)
            return dotted, owner, name
        fn = call.child_by_field_name("function") or call.child_by_field_name("macro")
        if fn is None and call.children:
            fn = call.children[0]
        if fn is None:
            return "", None, None
        if fn.type in self.g.members:
            owner, member = self.member_parts(fn)
            return self.dotted(fn), owner, member
        return self.dotted(fn), None, fn

    def qualifier(self, node) -> bool:
        """A chain's root that is a package or a type: ``time``, ``Locale``, ``Console``."""
        while node is not None and node.type in self.g.members:
            node = self.member_parts(node)[0]
        if (
            node is None
            or node.type not in self.g.idents
            and node.type not in ("predefined_type", "type_identifier")
        ):
            return node is not None and node.type == "scoped_identifier"
        name = self.src(node)
        return name in self.packages if self.g.name == "go" else name[:1].isupper()

    def _collect(self, n, names: list[str], calls: list) -> None:
        g, t = self.g, n.type
        if t in g.strings:
            for c in n.children:
                if c.type in INTERPOLATIONS:
                    self._collect(c, names, calls)
            return
        if t == "macro_invocation":
            found_names, found_calls = expression_parts(self.src(n).replace("::", "."))
            names += found_names
            calls += found_calls
            return
        if t in g.calls:
            dotted, owner, member = self.call_parts(n)
            args = self.args(n)
            calls.append((dotted, len(args)))
            qualified = owner is not None and self.qualifier(owner)  # time.Now(), LocalDate.now()
            if owner is not None and not (qualified and owner.type in g.idents):
                self._collect(owner, names, calls)  # DateTime.Now.ToString(): the owner reads the clock
            if member is not None and member.type in g.idents and not qualified:
                names.append(self.src(member))
            for a in args:
                self._collect(a, names, calls)
            return
        if t in g.members or t == "scoped_identifier":
            dotted = self.dotted(n)
            if clock := self._clock_property(n):
                calls.append(
                    (clock, None)
                )  # DateTime.Now, Date.now.description: a property reading the clock
            elif t != "scoped_identifier" and _SIMPLE.fullmatch(dotted):
                if not self.qualifier(n):
                    names.append(dotted)
            elif t in g.members and self.member_parts(n)[0] is not None:
                self._collect(self.member_parts(n)[0], names, calls)  # foo().bar: what the owner calls
            return
        if t in g.idents:
            names.append(self.src(n))
            return
        if t in _INDEX:
            owner = n.named_children[0] if n.named_children else None
            keys = [c for c in n.named_children[1:] if c.type in g.strings]
            if keys and not (owner is not None and config_container(self.src(owner))):
                names.append(self.src(keys[0]).strip("\"'`@$"))  # ctx["user_id"]: named by its key
        for c in n.named_children:
            self._collect(c, names, calls)

    def _clock_property(self, n) -> str | None:
        """C#'s ``DateTime.Now`` or Swift's ``Date.now``, the member chain ``n`` or its owner."""
        while self.g.name in ("csharp", "swift") and n is not None and n.type in self.g.members:
            dotted = self.dotted(n).removeprefix("System.")
            if call_verdict(dotted):
                return dotted
            n = self.member_parts(n)[0]
        return None

    def verdict(self, node, calls_only: bool = False) -> Verdict | None:
        """Why an expression is volatile; ``calls_only`` for what a declaration passes on (its calls)."""
        names: list[str] = []
        calls: list = []
        self._collect(node, names, calls)
        v = judge([] if calls_only else names, calls)
        if v or calls_only:
            return rust_paths(v, self.src(node)) if v and self.g.name == "rust" else v
        return self.held(names)

    def held(self, names: list[str]) -> Verdict | None:
        for name in names:
            if name in self.declared:
                return Verdict(
                    f"`{name}` holds a value that {self.declared[name].reason}", self.declared[name].severity
                )
        return None


def rust_macro_args(f: CodeFile, macro) -> list[tuple[str, str, object]]:
    """(name or "", text, first token) of each top-level argument of a Rust macro's token tree."""
    tree = next((c for c in macro.children if c.type == "token_tree"), None)
    if tree is None:
        return []
    out, cur = [], []
    for c in tree.children[1:-1]:
        if "comment" in c.type:
            continue  # /* clock */ between arguments: no argument's text
        if c.type == ",":
            out.append(cur)
            cur = []
        else:
            cur.append(c)
    out.append(cur)
    args = []
    for toks in out:
        if not toks:
            continue
        name = ""
        if len(toks) > 2 and toks[0].type == "identifier" and toks[1].type == "=":
            name, toks = f.src(toks[0]), toks[2:]
        text = f.data[toks[0].start_byte : toks[-1].end_byte].decode("utf-8", "replace")
        args.append((name, text, toks[0]))
    return args
