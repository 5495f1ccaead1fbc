"""One Python string token → pieces: decoded literal text with the file offset of every
character, and each f-string field (``{expr!r:spec}``) as it is written.

Handles every prefix (``r``, ``f``, ``rf``, ``u``; ``b`` gives None), the escapes Python
decodes (``\\n``, ``\\x41``, ``\\u00e9``, ``\\N{…}``, octal, a backslash-newline), doubled
braces in f-strings, and nested brackets and quotes inside a field. It neither parses the
field's expression nor judges it (:mod:`.python` does).
"""

from __future__ import annotations

import ast
import re
import warnings

from analyzer.lint.sources.pieces import Piece

_PREFIX = re.compile(r"([rRbBuUfF]*)('''|\"\"\"|'|\")")
_ESCAPE = re.compile(
    r"\\(?:N\{[^}]*\}|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}|\r\n|.)", re.S
)
_OPEN, _CLOSE = "{[(", "}])"


def _decode(seq: str) -> str:
    if seq in ("\\\n", "\\\r\n"):
        return ""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.literal_eval('"' + seq + '"') if seq != '\\"' else '"'
        except (ValueError, SyntaxError):
            return seq


def _close_brace(s: str, i: int, end: int) -> int:
    depth, j, quote = 0, i, ""
    while j < end:
        c = s[j]
        if quote:
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
            if depth == 0:
                return j
        j += 1
    return end - 1


def lex(token: str, start: int) -> list[Piece] | None:
    """The pieces of one string token at file offset ``start`` (None for bytes)."""
    m = _PREFIX.match(token)
    if not m or "b" in m.group(1).lower():
        return None
    raw, fmt = "r" in m.group(1).lower(), "f" in m.group(1).lower()
    i, end = m.end(), len(token) - len(m.group(2))
    pieces: list[Piece] = []
    chars: list[str] = []
    offs: list[int] = []

    def flush() -> None:
        if chars:
            pieces.append(Piece("".join(chars), offs + [start + i]))
            chars.clear()
            offs.clear()

    while i < end:
        c = token[i]
        if fmt and c in "{}" and token[i + 1 : i + 2] == c:
            chars.append(c)
            offs.append(start + i)
            i += 2
        elif fmt and c == "{":
            j = _close_brace(token, i, end)
            flush()
            pieces.append(Piece(token[i : j + 1], start=start + i))
            i = j + 1
        elif c == "\\" and not raw:
            e = _ESCAPE.match(token, i)
            for ch in _decode(e.group(0)):
                chars.append(ch)
                offs.append(start + i)
            i = e.end()
        else:
            chars.append(c)
            offs.append(start + i)
            i += 1
    flush()
    return pieces
