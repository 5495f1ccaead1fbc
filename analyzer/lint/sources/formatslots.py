"""Format strings of compiled languages: each slot becomes a piece judged by the argument filling it.

Four styles: ``printf`` (Go ``fmt.Sprintf``, Java ``String.format`` / ``.formatted``, Kotlin
``.format``, Swift ``String(format:)``: ``%s``, ``%[2]v``, ``%1$s``, ``%@``; ``%%`` and Java's ``%n``
are text; PHP ``sprintf``), ``braces`` (C# ``string.Format``, Java ``MessageFormat.format``: ``{0}``,
``{1:yyyy-MM-dd}``, ``{{``), ``rust`` (``format!``: ``{}``, ``{0}``, ``{name}``, ``{x:?}``, ``{{``)
and ``ruby`` (``format`` / ``%``: ``%s``, ``%<name>s``, ``%{name}``). :func:`fill` splits the
literal pieces at the slots; ``resolve(index, name)`` says why the argument is volatile.

It does NOT find format calls (:mod:`.compiled`) or decode the literal (:mod:`.codestrings`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from analyzer.detection.names import Verdict
from analyzer.lint.sources.pieces import Piece

STYLES = {
    "printf": re.compile(r"%%|%n|%(?:\[(\d+)\]|(\d+)\$)?[-+# 0,(<]*(?:\d+|\*)?(?:\.\d+)?[a-zA-Z@]"),
    "braces": re.compile(r"\{\{|\}\}|\{(\d+)(?:\s*,\s*-?\d+)?(?::[^{}]*)?\}"),
    "rust": re.compile(r"\{\{|\}\}|\{(\d+|[A-Za-z_]\w*)?(?::[^{}]*)?\}"),
    "ruby": re.compile(
        r"%%|%(?:\{(\w+)\}|<(\w+)>[-+# 0]*\d*(?:\.\d+)?[a-zA-Z]|(?:(\d+)\$)?[-+# 0]*\d*(?:\.\d+)?[a-zA-Z])"
    ),
}
_TEXT = {"%%": "%", "%n": "\n", "{{": "{", "}}": "}"}

Resolve = Callable[[int | None, str | None], Verdict | None]
#: the file span and text of the argument filling a positional slot (by index), if known
Where = Callable[[int], tuple[int, int, str] | None]


_PRINTF_CALLS = frozenset(("fmt.Sprintf", "fmt.Fprintf", "fmt.Appendf", "String.format"))
_BRACES_CALLS = frozenset(("MessageFormat.format", "string.format", "system.string.format"))


def call_style(dotted: str, swift_format: bool = False) -> str | None:
    """The slot style of a format call by its callee (``fmt.Sprintf`` → printf, C# ``string.Format``
    and ``AppendFormat`` → braces), or None; ``swift_format``: Swift's ``String(format: …)``."""
    if dotted in _PRINTF_CALLS or (swift_format and dotted == "String"):
        return "printf"
    if (
        dotted in _BRACES_CALLS
        or dotted.lower() in _BRACES_CALLS
        or dotted.rsplit(".", 1)[-1] == "AppendFormat"
    ):
        return "braces"
    return None


def fill(pieces: list[Piece], style: str, resolve: Resolve, where: Where | None = None) -> list[Piece]:
    """The pieces with every slot of ``style`` in their literal text as an interpolation piece; a
    positional slot (``%s``, ``{}``, ``{0}``) carries ``where`` its argument stands."""
    pattern = STYLES[style]
    out: list[Piece] = []
    seq = 0
    for p in pieces:
        if not p.literal:
            out.append(p)
            continue
        chars: list[str] = []
        offs: list[int] = []
        at = 0
        for m in pattern.finditer(p.text):
            chars.extend(p.text[at : m.start()])
            offs.extend(p.offset(i) for i in range(at, m.start()))
            at = m.end()
            if m.group(0) in _TEXT:
                chars.append(_TEXT[m.group(0)])
                offs.append(p.offset(m.start()))
                continue
            if chars:
                out.append(Piece("".join(chars), offs + [p.offset(m.start())]))
                chars, offs = [], []
            index, name, implicit = _slot(style, m, seq)
            seq += implicit
            at_arg = where(index) if where is not None and index is not None and name is None else None
            out.append(
                Piece(m.group(0), start=p.offset(m.start()), verdict=resolve(index, name), filled_by=at_arg)
            )
        chars.extend(p.text[at:])
        offs.extend(p.offset(i) for i in range(at, len(p.text)))
        if chars:
            out.append(Piece("".join(chars), offs + [p.offset(len(p.text))]))
    return out


def _slot(style: str, m: re.Match, seq: int) -> tuple[int | None, str | None, bool]:
    """(argument index, captured name, whether it took the next argument in turn)."""
    given = next((g for g in m.groups() if g is not None), None)
    if given is None:
        return seq, None, True
    if not given.isdigit():
        return None, given, False
    return int(given) - (style in ("printf", "ruby")), None, False


def node_place(f, nodes: list) -> Where:
    """Where the value filling positional slot ``index`` is in the file: (start, end, its source)."""

    def where(index: int):
        if not 0 <= index < len(nodes):
            return None
        node = nodes[index]
        return f.char(node.start_byte), f.char(node.end_byte), f.src(node)

    return where
