"""One PHP or Ruby string literal → :class:`~.pieces.Piece` list, read from its tree-sitter nodes.

PHP: ``"…"`` and heredocs interpolate ``$var``, ``$obj->field``, ``$a[0]``, ``{$expr}`` and ``${var}``;
``'…'`` and nowdocs do not (their only escapes are ``\\'`` and ``\\\\``). Ruby: ``"…"``, ``%Q(…)``,
``%(…)`` and heredocs (``<<~EOS``, ``<<-EOS``, body read where it stands) interpolate ``#{expr}``;
``'…'``, ``%q(…)`` and ``<<~'EOS'`` do not; ``"a" "b"`` is one literal. Each interpolation is a
piece judged by ``verdict``; every decoded character keeps its file offset.

It does NOT strip a heredoc's indentation, read ``%w[]`` arrays, symbols or backticks, or fill
format slots (:mod:`.formatslots`).
"""

from __future__ import annotations

import bisect
import re

from analyzer.lint.sources.codestrings import unescape
from analyzer.lint.sources.pieces import Piece

#: node types of a PHP literal's text: what stands between its interpolations
_TEXT = frozenset("string_content heredoc_content nowdoc_string nowdoc_body string_value".split())
_QUOTED = re.compile(r"\\([\\'])")  # the escapes of a single-quoted literal
_PHP_ENDS = frozenset(("heredoc_start", "heredoc_end", "<<<"))


def heredoc_bodies(f) -> dict[int, object]:
    """Ruby: each ``heredoc_beginning`` node's id → its ``heredoc_body`` (the n-th body, n-th start)."""
    starts, bodies = [], []
    for n in f.walk(f.tree.root_node):
        if n.type == "heredoc_beginning":
            starts.append(n)
        elif n.type == "heredoc_body":
            bodies.append(n)
    return {s.id: b for s, b in zip(starts, bodies)}


def _span(f, node) -> tuple[object, int, int, bool]:
    """(the node holding the text, its first and past-last byte, whether it is single-quoted)."""
    if node.type == "heredoc_beginning":
        body = f.heredocs.get(node.id)
        if body is None:
            return node, node.end_byte, node.end_byte, True
        end = next((c.start_byte for c in body.children if c.type == "heredoc_end"), body.end_byte)
        return body, body.start_byte, end, "'" in f.src(node)
    if node.type in ("heredoc", "nowdoc"):
        body = node.child_by_field_name("value")
        if body is None:
            return node, node.end_byte, node.end_byte, True
        return body, body.start_byte, body.end_byte, node.type == "nowdoc"
    kids = node.children
    opener = kids[0] if kids and not kids[0].is_named else None
    closer = kids[-1] if len(kids) > 1 and not kids[-1].is_named else None
    start = opener.end_byte if opener is not None else node.start_byte
    end = closer.start_byte if closer is not None else node.end_byte
    mark = f.src(opener) if opener is not None else '"'
    single = mark.startswith("'") or mark.startswith("%q") or (f.g.name == "php" and node.type == "string")
    return node, start, end, single


def interpolations(f, node) -> list[tuple[int, int, object]]:
    """(first byte, past-last byte, expression node) of each interpolation of a literal."""
    if node.type == "chained_string":
        return [i for c in node.named_children for i in interpolations(f, c)]
    holder, start, end, single = _span(f, node)
    if single:
        return []
    out = []
    kids = holder.children
    i = 0
    while i < len(kids):
        c = kids[i]
        if c.type == "interpolation":  # Ruby: #{ expr }
            inner = [k for k in c.named_children if k.type != "comment"]
            out.append((c.start_byte, c.end_byte, inner[0] if len(inner) == 1 else c))
        elif f.g.name == "php" and c.type == "{" and i + 2 < len(kids):  # {$expr}
            close = next((j for j in range(i + 1, len(kids)) if kids[j].type == "}"), len(kids) - 1)
            out.append((c.start_byte, kids[close].end_byte, kids[i + 1]))
            i = close
        elif f.g.name == "php" and c.is_named and c.type not in _TEXT and c.type != "escape_sequence":
            if c.type not in _PHP_ENDS:
                out.append((c.start_byte, c.end_byte, c))  # $var, $obj->field, $a[0], ${var}
        i += 1
    return [o for o in out if start <= o[0] and o[1] <= end]


def _text(f, a: int, b: int, single: bool, escapes: list, chars: list[str], offs: list[int]) -> None:
    """Decode bytes ``a``..``b`` of the file: raw text but for the escape nodes in it."""
    at = a
    k = bisect.bisect_left(escapes, a, key=lambda e: e.start_byte)  # escapes in source order
    for e in escapes[k:]:
        if e.start_byte >= b:
            break
        if e.end_byte > b:
            continue
        _raw(f, at, e.start_byte, single, chars, offs)
        seq = f.data[e.start_byte : e.end_byte].decode("utf-8", "replace")
        out = seq[1:] if single else unescape(seq[1:]) if len(seq) > 1 else seq
        chars.extend(out)
        offs.extend([f.char(e.start_byte)] * len(out))
        at = e.end_byte
    _raw(f, at, b, single, chars, offs)


def _raw(f, a: int, b: int, single: bool, chars: list[str], offs: list[int]) -> None:
    if b <= a:
        return
    ca, cb = f.char(a), f.char(b)
    text = f.text[ca:cb]
    if not single or "\\" not in text:
        chars.extend(text)
        offs.extend(range(ca, cb))
        return
    at = 0
    for m in _QUOTED.finditer(text):  # Ruby's single-quoted text has no escape nodes
        chars.extend(text[at : m.start()])
        offs.extend(range(ca + at, ca + m.start()))
        chars.append(m.group(1))
        offs.append(ca + m.start())
        at = m.end()
    chars.extend(text[at:])
    offs.extend(range(ca + at, cb))


def literal_pieces(f, node, verdict) -> list[Piece]:
    """``f`` is a :class:`.scriptexpr.ScriptFile`; ``verdict(expr)`` judges an interpolated expression."""
    if node.type == "chained_string":
        return [p for c in node.named_children if c.type == "string" for p in literal_pieces(f, c, verdict)]
    holder, start, end, single = _span(f, node)
    if holder.type in ("heredoc_body", "nowdoc_body") and f.data[start : start + 2] == b"\r\n":
        start += 2  # the line break after the heredoc's opening line
    elif holder.type in ("heredoc_body", "nowdoc_body") and f.data[start : start + 1] == b"\n":
        start += 1
    escapes = sorted((c for c in f.walk(holder) if c.type == "escape_sequence"), key=lambda e: e.start_byte)
    pieces: list[Piece] = []
    chars: list[str] = []
    offs: list[int] = []
    at = start
    for a, b, expr in interpolations(f, node):
        _text(f, at, a, single, escapes, chars, offs)
        if chars:
            pieces.append(Piece("".join(chars), offs + [f.char(a)]))
            chars, offs = [], []
        pieces.append(Piece(f.src_bytes(a, b), start=f.char(a), verdict=verdict(expr)))
        at = b
    _text(f, at, end, single, escapes, chars, offs)
    if chars:
        pieces.append(Piece("".join(chars), offs + [f.char(end)]))
    return pieces
