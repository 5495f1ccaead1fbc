"""Go, Rust, Java, C# and Kotlin: where a volatile value enters a prompt other than in a literal.

The value argument of a slot replacement (``prompt.replace("{{CURRENT_TIME}}", &now)``,
``strings.ReplaceAll(p, "{date}", today)``, ``sb.Replace("{time}", DateTime.Now.ToString())``) and
each volatile argument of a format call whose format is not a literal of the file but is named as
a prompt (``fmt.Sprintf(constants.SystemPrompt, today.Format(…))``), and each volatile field of the
data a Go template is executed with (``tmpl.Execute(w, struct{…}{Time: time.Now()…})``, or a name
declared with such a literal: ``data := promptData{…}``), and a clock reading passed to a call that
sends its arguments to a model (``llmClient.chat(line, LocalDate.now().toString())``), one template each.

It does NOT read literals (:mod:`.compiled`) nor judge the value's text beyond its verdict.
"""

from __future__ import annotations

import re

from analyzer.lint.sources.pieces import Piece, Template
from analyzer.lint.sources.promptlike import prompt_named

#: replacement calls and the index of their (key, value) arguments
_REPLACES = {"replace": 0, "replaceAll": 0, "Replace": 0, "ReplaceAll": 0, "replacen": 0}
#: … as package functions taking the text first (Go ``strings.ReplaceAll(s, old, new)``)
_PACKAGE_REPLACES = {"strings.ReplaceAll": 1, "strings.Replace": 1}
#: a key shaped like a template slot: "{{CURRENT_TIME}}", "{date}", "%TIME%", "${now}", "[[date]]"
SLOT_KEY = re.compile(r"""^["'`]?(?:\{\{?\s*[\w.]+\s*\}?\}|\$\{[\w.]+\}|%[\w.]+%|\[\[[\w.]+\]\])["'`]?$""")
#: Go's text/template and html/template: the data's fields fill the template's ``{{.Time}}`` slots
_EXECUTES = {"Execute", "ExecuteTemplate"}
#: calls that send their arguments to a model ("llmClient.chat", "assistant.ask", "model.generateContent")
_ASKS = re.compile(
    r"(?i)(?:llm|gpt|openai|claude|gemini|chat|assistant|model|\bai)\w*"
    r"\.(?:chat|ask|complete|completions?|generate(?:content|text)?|prompt|invoke|respond|reply|send(?:message)?|query)$"
)
#: format calls whose first (Go: first or second) argument is the format
_FORMATS = {"fmt.Sprintf": 0, "fmt.Fprintf": 1, "String.format": 0, "string.Format": 0, "String.Format": 0}


def templates(finder) -> list[Template]:
    """``finder`` is :class:`.compiled._Finder` (its file, grammar and literal lookups)."""
    f, g = finder.f, finder.g
    out: list[Template] = []
    declared = _go_literals(f) if g.name == "go" else {}
    for n in f.walk(f.tree.root_node):
        if n.type not in g.calls:
            continue
        dotted, owner, _ = f.call_parts(n)
        last = dotted.rsplit(".", 1)[-1]
        args = f.args(n)
        if dotted in _PACKAGE_REPLACES or (owner is not None and last in _REPLACES):
            at = _PACKAGE_REPLACES.get(dotted, 0)
            if len(args) < at + 2:
                continue
            key, value = args[at], args[at + 1]
            if value.type in g.strings or key.type not in g.strings:
                continue
            v = f.verdict(value)
            if v is not None and SLOT_KEY.match(f.src(key).strip()):
                out.append(one_value(f, value, v, "replace"))
        elif last in _EXECUTES and owner is not None:  # tmpl.Execute(w, struct{…}{Time: time.Now()…})
            for arg in args:
                arg = (
                    _declared(declared, f.src(arg).lstrip("&"), n) or arg
                )  # data := promptData{…}; Execute(w, data)
                for kv in (k for k in f.walk(arg) if k.type == "keyed_element"):
                    value = kv.named_children[-1] if len(kv.named_children) >= 2 else None
                    v = f.verdict(value) if value is not None and value.type not in g.strings else None
                    if v is not None:
                        out.append(one_value(f, value, v, dotted))
        elif dotted in _FORMATS:
            at = _FORMATS[dotted]
            if len(args) <= at:
                continue
            fmt = args[at]
            if fmt.type in g.strings or finder._held_literal(fmt) is not None or not prompt_named(f.src(fmt)):
                continue
            for arg in args[at + 1 :]:
                v = f.verdict(arg)
                if v is not None:
                    out.append(one_value(f, arg, v, f.src(fmt)))
        elif _ASKS.search(dotted):  # llmClient.chat(line, LocalDate.now().toString()): the clock sent along
            for arg in args:
                v = f.verdict(arg, calls_only=True) if arg.type not in g.strings else None
                if v is not None:
                    out.append(one_value(f, arg, v, dotted))
    return out


def one_value(f, node, verdict, name: str) -> Template:
    """A template of one judged value: the code that fills a slot elsewhere."""
    return Template([Piece(f.src(node), start=f.char(node.start_byte), verdict=verdict)], name)


def _go_literals(f) -> dict:
    """Go's ``name := T{…}`` (or ``&T{…}``) declarations: each name's composite literals, in order."""
    out: dict[str, list] = {}
    for n in f.walk(f.tree.root_node):
        if n.type != "short_var_declaration" or len(n.named_children) != 2:
            continue
        left, right = n.named_children
        if len(left.named_children) == 1 == len(right.named_children):
            value = right.named_children[0]
            if value.type == "unary_expression" and value.named_children:
                value = value.named_children[-1]
            if value.type == "composite_literal":
                out.setdefault(f.src(left.named_children[0]), []).append(value)
    return out


def _declared(declared: dict, name: str, call):
    """The literal ``name`` was last declared with before ``call``, in the function around it."""
    scope = call.parent
    while scope is not None and scope.type not in (
        "function_declaration",
        "method_declaration",
        "func_literal",
    ):
        scope = scope.parent
    best = None
    for lit in declared.get(name, ()):
        inside = scope is None or scope.start_byte <= lit.start_byte < scope.end_byte
        if inside and lit.start_byte < call.start_byte:
            best = lit
    return best
