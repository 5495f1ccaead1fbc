"""One string literal of Go, Rust, Java, C# or Kotlin → :class:`~.pieces.Piece` list.

Reads the literal's own source: its delimiters (``"…"``, Go ```…```, Rust ``r#"…"#``, Java text
blocks and C#/Kotlin triple-quoted strings, C# ``@"…"`` and ``$"…"``), its escapes (none in raw strings,
``""`` in verbatim ones, ``{{`` in C# interpolated ones) and its interpolations (C# ``{x}``,
Kotlin ``$x`` / ``${x}``), each a piece judged by ``verdict``. Every decoded character keeps its
file offset.

It does NOT strip a text block's indentation (the detector reads it as it is) or fill format slots
(:mod:`.formatslots`).
"""

from __future__ import annotations

import re

from analyzer.detection.names import judge
from analyzer.lint.sources.pieces import Piece

_OPEN = re.compile(r"([$@rbcu]*)(#*)(\"+|`|')")
_ESCAPE = re.compile(
    r"\\(u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|x[0-9a-fA-F]{2}|[0-7]{1,3}|\r?\n|.)", re.S
)
_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "a": "\a", "s": " "}
_BRACES = re.compile(r"\{\{|\}\}")
_QUOTES = re.compile(r'""')
#: the node types of an interpolation: Kotlin's and C#'s ``interpolation``, Swift's ``\(…)``
INTERPOLATIONS = frozenset(("interpolation", "interpolated_expression"))
_INTERPOLATION_PARTS = {
    "interpolation_brace",
    "interpolation_alignment_clause",
    "interpolation_format_clause",
}


def unescape(body: str) -> str:
    if body[0] in "\r\n":
        return ""  # a line continuation
    if body[0] in "uUx" and len(body) > 1:
        try:
            return chr(int(body[1:].strip("{}"), 16))
        except ValueError:
            return "\\" + body
    if body[0].isdigit():
        return chr(int(body, 8)) if body != "0" else "\0"
    return _SIMPLE.get(body, body)


def _decode(s: str, a: int, b: int, base: int, pattern: re.Pattern | None, chars: list[str], offs: list[int]):
    """Decode ``s[a:b]``, appending each character and its file offset (``base`` + index)."""
    at = a
    if pattern is not None:
        for m in pattern.finditer(s, a, b):
            chars.extend(s[at : m.start()])
            offs.extend(range(base + at, base + m.start()))
            if m.group(0).startswith("\\"):
                out = unescape(m.group(1))
            else:
                out = m.group(0)[0]  # "" → ", {{ → {
            chars.extend(out)
            offs.extend([base + m.start()] * len(out))
            at = m.end()
    chars.extend(s[at:b])
    offs.extend(range(base + at, base + b))


def _pattern(grammar: str, prefix: str, quotes: str) -> re.Pattern | None:
    raw = quotes == "`" or "r" in prefix or (len(quotes) >= 3 and grammar in ("csharp", "kotlin"))
    braces = grammar == "csharp" and "$" in prefix and not raw
    if "@" in prefix:
        return re.compile(_QUOTES.pattern + ("|" + _BRACES.pattern if braces else ""))
    if raw:
        return None
    return re.compile(_ESCAPE.pattern + ("|" + _BRACES.pattern if braces else ""), re.S)


_IDENT = re.compile(r"[A-Za-z_]\w*")


def _held(f, name: str):
    """What a declared variable of the file holds (``val today = LocalDate.now()``), where ``f`` keeps them."""
    held = getattr(f, "held", None)
    return held([name]) if held is not None else None


def expression_of(node):
    """The expression inside an interpolation node."""
    inner = [c for c in node.named_children if c.type not in _INTERPOLATION_PARTS]
    return inner[0] if inner else node


def literal_pieces(f, node, grammar: str, verdict) -> list[Piece]:
    """``f`` is a :class:`.treetext.TreeText`; ``verdict(expr)`` judges an interpolated expression."""
    s = f.src(node)
    base = f.char(node.start_byte)
    m = _OPEN.match(s)
    if m is None:
        return []
    prefix, hashes, quotes = m.groups()
    if len(quotes) == 2:
        return []  # ""
    if len(quotes) > 3 and grammar != "csharp":
        quotes = quotes[:3]
    elif len(quotes) < 3:
        quotes = quotes[:1]
    start = len(prefix) + len(hashes) + len(quotes)
    end = s.rfind(quotes + hashes)
    if end < start:
        end = len(s)
    pattern = _pattern(grammar, prefix, quotes)
    pieces: list[Piece] = []
    chars: list[str] = []
    offs: list[int] = []
    at = start
    kids = node.children
    for i, child in enumerate(kids):
        if grammar == "kotlin" and child.type == "string_content" and f.src(child) == "$":
            name = _IDENT.match(f.src(kids[i + 1])) if i + 1 < len(kids) else None
            if name is None or kids[i + 1].type != "string_content":
                continue  # "$" before a non-name: the character itself
            a = f.char(child.start_byte) - base  # Kotlin's short form "$name": the grammar leaves it text
            b, why = a + 1 + name.end(), judge([name.group(0)], []) or _held(f, name.group(0))
        elif child.type in INTERPOLATIONS:
            a, b = f.char(child.start_byte) - base, f.char(child.end_byte) - base
            if child.type == "interpolated_expression":  # Swift: "\(" and ")" are its siblings
                a = f.char(kids[i - 1].start_byte) - base if i and kids[i - 1].type == "\\(" else a
                b = (
                    f.char(kids[i + 1].end_byte) - base
                    if i + 1 < len(kids) and kids[i + 1].type == ")"
                    else b
                )
            why = verdict(expression_of(child))
        else:
            continue
        _decode(s, at, a, base, pattern, chars, offs)
        if chars:
            pieces.append(Piece("".join(chars), offs + [base + a]))
            chars, offs = [], []
        pieces.append(Piece(s[a:b], start=base + a, verdict=why))
        at = b
    _decode(s, at, end, base, pattern, chars, offs)
    if chars:
        pieces.append(Piece("".join(chars), offs + [base + end]))
    return pieces
