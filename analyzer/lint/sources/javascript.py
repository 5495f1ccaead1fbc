"""JavaScript and TypeScript source → prompt templates, parsed with tree-sitter.

Finds string literals, template literals and ``+`` / ``+=`` chains; each ``${…}`` and
non-literal operand is judged by what it calls and names, following ``const``/``let``/``var``
declarations. Byte positions become characters of the file text. Grammars: the
``tree-sitter-javascript`` and ``tree-sitter-typescript`` wheels (TypeScript for ``.ts``, TSX
for ``.tsx``, JavaScript with JSX otherwise).

It does NOT read files, or take templates tagged as code (``sql`…```), imports or non-prompt literals.
"""

from __future__ import annotations

import re
from functools import cache

from analyzer.detection.names import Verdict, config_container, judge
from analyzer.lint.sources.jsitems import content_item, fixed_choice
from analyzer.lint.sources.jsslots import slot_templates
from analyzer.lint.sources.pieces import Piece, Template, folded, prompt_template
from analyzer.lint.sources.promptlike import skipped_call
from analyzer.lint.sources.treetext import TreeText

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


@cache
def _parser(dialect: str):
    from tree_sitter import Language, Parser

    if dialect == "javascript":
        import tree_sitter_javascript as grammar

        lang = grammar.language()
    else:
        import tree_sitter_typescript as grammar

        lang = grammar.language_tsx() if dialect == "tsx" else grammar.language_typescript()
    return Parser(Language(lang))


def dialect_of(suffix: str) -> str:
    return {".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx"}.get(
        suffix.lower(), "javascript"
    )


def _unescape(seq: str) -> str:
    body = seq[1:]
    if not body or body[0] in "\r\n\u2028\u2029":
        return ""
    if body[0] == "x" and len(body) == 3:
        return chr(int(body[1:], 16))
    if body[0] == "u":
        digits = body[2:-1] if body.startswith("u{") else body[1:]
        try:
            return chr(int(digits, 16))
        except ValueError:
            return seq
    return _ESCAPES.get(body[0], body[0])


class _File(TreeText):
    def __init__(self, text: str, dialect: str) -> None:
        super().__init__(text, _parser(dialect))
        self.declared: dict[str, Verdict] = {}
        for node in self.walk(self.tree.root_node):
            if node.type == "variable_declarator":
                name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
                if (
                    name is not None
                    and value is not None
                    and name.type == "identifier"
                    and value.type not in ("string", "template_string", "binary_expression")
                ):
                    v = self.verdict(value, calls_only=True)
                    if v:
                        self.declared[self.src(name)] = v

    def verdict(self, node, calls_only: bool = False) -> Verdict | None:
        """Why an expression is volatile; ``calls_only`` for what a declaration passes on (its calls)."""
        if content_item(self, node):
            return None  # chats.map(chat => `${chat.sender.nickname}`): an item of the history, content
        if node.type == "ternary_expression" and fixed_choice(node):
            return None  # ${user.name ? 've' : 's'}: one of two texts written out
        names: list[str] = []
        calls: list[tuple[str, int | None]] = []
        for n in self.walk(node):
            if n.type == "call_expression":
                fn, args = n.child_by_field_name("function"), n.child_by_field_name("arguments")
                calls.append(
                    (
                        "".join(self.src(fn).split()).replace("?.", "."),
                        len(args.named_children) if args is not None else None,
                    )
                )
            elif n.type == "new_expression":
                ctor, args = n.child_by_field_name("constructor"), n.child_by_field_name("arguments")
                calls.append(("new " + self.src(ctor), len(args.named_children) if args is not None else 0))
            elif n.type in ("identifier", "property_identifier", "shorthand_property_identifier"):
                names.append(self.src(n))
            elif (
                n.type == "member_expression"
                and n.parent is not None
                and n.parent.type != "member_expression"
            ):
                dotted = "".join(self.src(n).split()).replace("?.", ".")
                if dotted.replace(".", "").replace("_", "").replace("$", "").isalnum():
                    names.append(dotted)  # requestHints.city: the owner's words with the field's
            elif n.type == "subscript_expression":
                index = n.child_by_field_name("index")
                owner = n.child_by_field_name("object")
                if (
                    index is not None
                    and index.type == "string"
                    and not (owner is not None and config_container(self.src(owner)))
                ):
                    names.append(self.src(index).strip("'\"`"))  # ctx["user_id"]: named by its key
        v = judge([] if calls_only else names, calls)
        if v or calls_only:
            return v
        for name in names:
            if name in self.declared:
                return Verdict(
                    f"`{name}` holds a value that {self.declared[name].reason}", self.declared[name].severity
                )
        return None

    def literal(self, node) -> list[Piece]:
        """Pieces of a ``string`` or ``template_string`` node."""
        pieces: list[Piece] = []
        chars: list[str] = []
        offs: list[int] = []
        for child in node.children:
            if child.type in ("string_fragment", "escape_sequence"):
                raw = self.src(child)
                start = self.char(child.start_byte)
                if child.type == "string_fragment":
                    chars.extend(raw)
                    offs.extend(range(start, start + len(raw)))
                else:
                    for ch in _unescape(raw):
                        chars.append(ch)
                        offs.append(start)
            elif child.type == "template_substitution":
                if chars:
                    pieces.append(Piece("".join(chars), offs + [self.char(child.start_byte)]))
                    chars, offs = [], []
                expr = child.named_children[0] if child.named_children else child
                pieces.append(
                    Piece(self.src(child), start=self.char(child.start_byte), verdict=self.verdict(expr))
                )
        if chars:
            pieces.append(Piece("".join(chars), offs + [self.char(node.end_byte) - 1]))
        return pieces


#: tags of templates that hold code or markup, never a prompt
_CODE_TAG = re.compile(
    r"(?i)(?:^|\.)(?:sql|css|gql|graphql|html|svg|xml|glsl|sh|bash|cmd|exec|keyframes|injectGlobal|createGlobalStyle)$|^styled\b"
)


#: operators whose result may be the literal itself: "+" joins it, a default (env || "…") or a guard
#: (flag && "…") yields it
_PASSES_ON = frozenset(("+", "||", "??", "&&"))


class _Finder:
    def __init__(self, f: _File) -> None:
        self.f = f

    def context(self, node) -> tuple[str, bool]:
        """(the name the code gives this text, whether it is no prompt by where it stands)."""
        f, cur = self.f, node
        while cur.parent is not None:
            p = cur.parent
            t = p.type
            if t == "variable_declarator":
                name = p.child_by_field_name("name")
                return (f.src(name) if name is not None else ""), False
            if t in ("assignment_expression", "augmented_assignment_expression"):
                left = p.child_by_field_name("left")
                return (f.src(left) if left is not None else ""), False
            if t == "pair":
                key = p.child_by_field_name("key")
                if key is not None and key.id == cur.id:
                    return "", True  # a map's key ("{current_date}": …) names a slot: no text of its own
                return (f.src(key).strip("'\"`") if key is not None else ""), False
            if t in ("public_field_definition", "field_definition", "property_signature"):
                name = p.child_by_field_name("name") or p.child_by_field_name("property")
                return (f.src(name) if name is not None else ""), False
            if t == "arguments":
                call = p.parent
                fn = call.child_by_field_name("function") or call.child_by_field_name("constructor")
                name = "".join(f.src(fn).split()) if fn is not None else ""
                return name, skipped_call(name) or call.type == "new_expression" and name.endswith("Error")
            if t == "call_expression":  # a tagged template: sql`…` is code, $`…` or prompt`…` may be a prompt
                tag = p.child_by_field_name("function")
                return "", tag is None or bool(_CODE_TAG.search(f.src(tag)))
            if t in ("import_statement", "export_statement") and cur.type == "string":
                return "", True
            if t == "return_statement" or t in ("arrow_function",) and cur.type != "statement_block":
                fn = p
                while fn is not None and fn.type not in (
                    "function_declaration",
                    "method_definition",
                    "function_expression",
                    "arrow_function",
                    "generator_function_declaration",
                ):
                    fn = fn.parent
                if fn is None:
                    return "", False
                name = fn.child_by_field_name("name")
                if name is not None:
                    return f.src(name), False
                cur = fn
                continue
            if t == "binary_expression" and f.src(p.child_by_field_name("operator")) not in _PASSES_ON:
                return "", True  # compared, not sent: x === "…"
            if t in (
                "throw_statement",
                "jsx_attribute",
                "import_statement",
                "switch_case",
                "subscript_expression",
            ):
                return "", True
            cur = p
        return "", False

    def plus_chain(self, node) -> list:
        """Leaves of a ``+`` chain rooted at ``node``."""
        if node.type == "binary_expression" and self.f.src(node.child_by_field_name("operator")) == "+":
            return self.plus_chain(node.child_by_field_name("left")) + self.plus_chain(
                node.child_by_field_name("right")
            )
        if node.type == "parenthesized_expression" and len(node.named_children) == 1:
            inner = node.named_children[0]
            if inner.type == "binary_expression":
                return self.plus_chain(inner)
        return [node]

    def templates(self) -> list[Template]:
        f = self.f
        out: list[Template] = []
        appended: list[tuple[list[Piece], str]] = []
        seen: set[int] = set()
        for node in f.walk(f.tree.root_node):
            if node.id in seen:
                continue
            if node.type == "binary_expression" and f.src(node.child_by_field_name("operator")) == "+":
                leaves = self.plus_chain(node)
                if not any(x.type in ("string", "template_string") for x in leaves):
                    continue
                pieces: list[Piece] = []
                for leaf in leaves:
                    if leaf.type in ("string", "template_string"):
                        pieces += f.literal(leaf)
                    else:
                        pieces.append(
                            Piece(f.src(leaf), start=f.char(leaf.start_byte), verdict=f.verdict(leaf))
                        )
                for sub in f.walk(node):
                    seen.add(sub.id)
            elif node.type in ("string", "template_string"):
                pieces = f.literal(node)
                for sub in f.walk(node):
                    seen.add(sub.id)
            else:
                continue
            name, skip = self.context(node)
            t = prompt_template(pieces, name, skip, slots_count=True)
            if t is not None:
                out.append(t)
            elif name and not skip and node.parent is not None:
                if node.parent.type == "augmented_assignment_expression":
                    appended.append((pieces, name))
            if t is None and node.type == "template_string":  # no prompt itself: one in its `${…}` may be
                seen.difference_update(sub.id for sub in f.walk(node) if sub.id != node.id)
        prompts = {t.name for t in out}
        for pieces, name in appended:  # text += `This thread has ${n} messages.`: part of the prompt built
            if name in prompts and (t := prompt_template(pieces, name, False, joined=True)) is not None:
                out.append(t)
        out = folded(out)
        out += slot_templates(f)
        return sorted(out, key=lambda t: t.file_offset(0))


def templates(text: str, suffix: str = ".js") -> list[Template]:
    """The prompt templates of a JS/TS file's text (tree-sitter recovers from syntax errors)."""
    return _Finder(_File(text, dialect_of(suffix))).templates()
