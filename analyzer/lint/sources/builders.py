"""Go, Rust, Java, C# and Kotlin: a prompt written piece by piece into a builder.

``b.WriteString("[Long-term memory]\\n"); b.WriteString(memoryText)`` (Go ``strings.Builder``),
``sb.append("Today is ").append(today)`` (Java, Kotlin), ``sb.Append(…)`` / ``AppendLine(…)`` (C#),
``s.push_str(…)`` (Rust): the writes to one receiver in one function, in source order, make one
template, literal arguments as its text and the others as interpolations judged by what they call
and name (a variable holding text built elsewhere is not judged again).

It does NOT follow a builder across functions, read a format call written into it beyond its own
pieces, or take single-character writes (``WriteByte('\\n')``).
"""

from __future__ import annotations

from analyzer.lint.sources.pieces import Piece, Template, prompt_template

#: the calls that append their one argument to the receiver's text
WRITES = frozenset("WriteString append Append AppendLine appendLine push_str write_str".split())
#: Kotlin scope functions whose lambda writes to a builder without naming it (``buildString { appendLine(…) }``)
_SCOPES = frozenset(("buildString", "apply", "with", "run"))


def _scope(f, n):
    """The ``buildString { … }`` (or ``StringBuilder().apply { … }``) lambda a receiverless write sits in."""
    p = n.parent
    while p is not None:
        if p.type == "lambda_literal" and p.parent is not None:
            call = p.parent.parent if p.parent.type == "annotated_lambda" else p.parent
            call = call.parent if call is not None and call.type == "call_suffix" else call
            if (
                call is not None
                and call.type in f.g.calls
                and f.call_parts(call)[0].rsplit(".", 1)[-1] in _SCOPES
            ):
                return p  # (a forEach { } inside it: walk on up)
        if p.type in f.g.function_types and p.type != "lambda_literal":
            return None
        p = p.parent
    return None


def _root(f, owner):
    """The builder a (maybe chained) write is made to: ``sb`` of ``sb.append(a).append(b)``."""
    while owner is not None and owner.type in f.g.calls:
        dotted, inner, _ = f.call_parts(owner)
        if dotted.rsplit(".", 1)[-1] not in WRITES:
            break
        owner = inner
    return owner


def groups(finder) -> list[tuple[list, list[Piece]]]:
    """Per builder with a literal written into it: (the write calls, the pieces they write)."""
    f = finder.f
    order: dict[tuple, list] = {}
    for n in f.walk(f.tree.root_node):
        if n.type not in f.g.calls:
            continue
        dotted, owner, _ = f.call_parts(n)
        args = f.args(n)
        if dotted.rsplit(".", 1)[-1] not in WRITES or len(args) != 1:
            continue
        if owner is None:  # Kotlin: appendLine("…") inside buildString { }
            scope = _scope(f, n) if f.g.name == "kotlin" else None
            if scope is not None:
                order.setdefault(("<scope>", scope.start_byte), []).append(n)
            continue
        root = _root(f, owner)
        if root is None or root.type not in f.g.idents and root.type not in f.g.members:
            continue
        order.setdefault((finder._function(n), f.src(root)), []).append(n)
    out = []
    for calls in order.values():
        calls.sort(key=lambda c: f.args(c)[0].start_byte)  # a chain's inner write comes first
        pieces: list[Piece] = []
        literal = False
        for c in calls:
            for arg in finder.plus_chain(f.args(c)[0]):  # "Now: " + DateTime.Now…: each operand
                text = finder.text_pieces(arg)
                if text is not None:
                    literal = literal or arg.type in f.g.strings
                    pieces += text
                elif arg.type not in ("rune_literal", "character_literal", "char_literal"):
                    held = arg.type in f.g.idents and f.src(arg) in finder.texts
                    verdict = None if held else f.verdict(arg)
                    pieces.append(Piece(f.src(arg), start=f.char(arg.start_byte), verdict=verdict))
        if literal and len(calls) > 1:
            out.append((calls, pieces))
    return out


def templates(finder, seen: set[int]) -> list[Template]:
    """The builders' templates that read as prompts; every node of their writes joins ``seen``
    (the literals written are read here, as part of their builder's text, not again alone)."""
    out = []
    for calls, pieces in groups(finder):
        seen.update(sub.id for c in calls for sub in finder.f.walk(c))
        t = prompt_template(pieces, *finder.context(calls[0]), slots_count=True)
        if t is not None:
            out.append(t)
    return out
