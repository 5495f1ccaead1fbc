"""PHP and Ruby: a prompt written piece by piece, and values put into a prompt's slots.

:func:`templates`: ``$p = "…"; $p .= "Today: " . date('Y-m-d');`` (PHP ``.=``), ``p << "…"`` and
``p += "…"`` (Ruby): an assignment and the writes after it to one variable in one function, in
source order, make one template (a new assignment starts the next). :func:`slots`: the value of a
slot replacement (``str_replace('{{date}}', $today, $tpl)``, ``str_replace([…], […], $tpl)``,
``strtr($tpl, ['{date}' => …])``, ``tpl.gsub('{{date}}', Date.today.to_s)``) and each volatile
argument of a format call whose format is named as a prompt but is no literal of the file.

It does NOT follow a text across functions, nor read a replacement keyed by a regex.
"""

from __future__ import annotations

import re

from analyzer.lint.sources import codeslots
from analyzer.lint.sources.codeslots import SLOT_KEY, one_value
from analyzer.lint.sources.pieces import Piece, Template, prompt_template
from analyzer.lint.sources.promptlike import prompt_named
from analyzer.lint.sources.scriptcontext import sql

#: format calls (PHP's ``printf`` prints: its text is no prompt)
FORMATS = {
    "php": frozenset(("sprintf", "vsprintf")),
    "ruby": frozenset("format sprintf Kernel.format".split()),
}
_WRITES = {"augmented_assignment_expression": ".=", "operator_assignment": "+=", "binary": "<<"}
_RECEIVERS = ("variable_name", "identifier", "instance_variable", "member_access_expression", "constant")
_ARRAY = "array_creation_expression"


def _operator(f, node) -> str:
    op = node.child_by_field_name("operator")
    return f.src(op) if op is not None else ""


def _writes(finder, n) -> list[tuple[object, object, bool]]:
    """(receiver, value, whether it assigns anew) of each write ``n`` makes: ``p << a << b`` makes two."""
    f, g = finder.f, finder.g
    left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
    if left is None or right is None:
        return []
    if n.type in g.decls:
        return [(left, right, True)] if left.type in _RECEIVERS else []
    if _WRITES.get(n.type) != _operator(f, n):
        return []
    if n.type == "binary":
        if n.parent is not None and n.parent.type == "binary" and _operator(f, n.parent) == "<<":
            return []  # read from the chain's last write
        values = [right]
        while left.type == "binary" and _operator(f, left) == "<<":
            values.insert(0, left.child_by_field_name("right"))
            left = left.child_by_field_name("left")
        return [(left, v, False) for v in values] if left.type in _RECEIVERS else []
    return [(left, right, False)] if left.type in _RECEIVERS else []


def _pieces(finder, value) -> tuple[list[Piece], bool]:
    f = finder.f
    pieces: list[Piece] = []
    literal = False
    for leaf in finder.plus_chain(value):
        text = finder.text_pieces(leaf)
        if text is not None:
            literal = literal or leaf.type in finder.g.strings
            pieces += text
        else:
            held = leaf.type in finder.g.idents and f.src(leaf) in finder.texts
            pieces.append(
                Piece(f.src(leaf), start=f.char(leaf.start_byte), verdict=None if held else f.verdict(leaf))
            )
    return pieces, literal


def templates(finder, seen: set[int]) -> list[Template]:
    """The texts written piece by piece that read as prompts; their nodes join ``seen``."""
    f = finder.f
    runs: dict[tuple, list] = {}
    for n in f.walk(f.tree.root_node):
        if n.type not in finder.g.decls and n.type not in _WRITES:
            continue
        for receiver, value, anew in _writes(finder, n):
            key = (finder._function(n), f.src(receiver))
            if anew or key not in runs:
                runs.setdefault(key, []).append([])
            runs[key][-1].append((n, value, anew))
    out = []
    for (_, name), groups in runs.items():
        for run in groups:
            if len(run) < 2 or all(anew for _, _, anew in run):
                continue
            pieces: list[Piece] = []
            literal = False
            for _, value, _ in run:
                got, lit = _pieces(finder, value)
                pieces += got
                literal = literal or lit
            if not literal:
                continue
            seen.update(sub.id for n, _, _ in run for sub in f.walk(n))
            if sql(pieces[0].text, name):
                continue
            t = prompt_template(pieces, name, False, slots_count=True)
            if t is not None:
                out.append(t)
    return out


#: a pattern's optional spacing and escapes around a slot's name (``\s*``, ``\{``)
_REGEX_SPACING = re.compile(r"\\s[*+?]?|\\(?=[{}$%\[\]])")


def _pairs(f, key, value) -> list[tuple]:
    """(key, value) pairs of a replacement: one, or PHP's arrays of keys and values by position."""
    if key.type == _ARRAY and value.type == _ARRAY:
        keys = [c.named_children[-1] for c in key.named_children if c.named_children]
        values = [c.named_children[-1] for c in value.named_children if c.named_children]
        return list(zip(keys, values))
    return [(key, value)]


def slots(finder) -> list[Template]:
    """``finder`` is :class:`.scripts._ScriptFinder`."""
    f, g = finder.f, finder.g
    out: list[Template] = codeslots.templates(finder)
    for n in f.walk(f.tree.root_node):
        if n.type not in g.calls and n.type != "binary":
            continue
        pairs, fmt, values = [], None, []
        if n.type == "binary":
            if _operator(f, n) == "%" and n.child_by_field_name("right") is not None:
                fmt, right = n.child_by_field_name("left"), n.child_by_field_name("right")
                values = right.named_children if right.type in ("array", "hash") else [right]
        else:
            dotted, owner, _ = f.call_parts(n)
            args = f.args(n)
            last = dotted.rsplit(".", 1)[-1]
            if g.name == "php" and dotted in ("str_replace", "str_ireplace") and len(args) >= 2:
                pairs = _pairs(f, args[0], args[1])
            elif g.name == "php" and dotted == "strtr" and len(args) == 2 and args[1].type == _ARRAY:
                pairs = [
                    tuple(c.named_children) for c in args[1].named_children if len(c.named_children) == 2
                ]
            elif g.name == "ruby" and owner is not None and last in ("gsub", "sub", "gsub!", "sub!"):
                pairs = [(args[0], args[1])] if len(args) == 2 else []
            elif dotted in FORMATS[g.name] and args:
                fmt, values = args[0], args[1:]
        for key, value in pairs:
            if key.type in g.strings:
                key_text = f.src(key).strip()
            elif key.type == "regex":  # gsub(/{{\s*CURRENT_TIME\s*}}/, t): the slot less its spacing
                key_text = _REGEX_SPACING.sub("", f.src(key).strip().strip("/"))
            else:
                continue
            if value.type not in g.strings and SLOT_KEY.match(key_text):
                v = f.verdict(value)
                if v is not None:
                    out.append(one_value(f, value, v, "replace"))
        if fmt is None or fmt.type in g.strings or finder._held_literal(fmt) is not None:
            continue
        if prompt_named(f.src(fmt)):
            for arg in values:
                if arg.type == "pair":
                    arg = arg.child_by_field_name("value") or arg  # format(PROMPT, date: Date.today)
                v = f.verdict(arg)
                if v is not None:
                    out.append(one_value(f, arg, v, f.src(fmt)))
    return out
