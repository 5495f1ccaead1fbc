"""Where a YAML or TOML prompt file's comments are: text its parser drops, so no value there reaches a model.

:func:`comment_lines` gives the span of each whole-line comment (``  # Variables: {{date}}, …``),
leaving alone the lines of a block scalar (``template: |`` and the more indented lines under it,
where ``### Heading`` is prompt text). Lint reads such a file as text; findings in these spans are
dropped (:mod:`.doc`).

A quoted scalar spread over lines (``prompt: "You are …`` up to its closing quote) is text too.

:func:`toml_comment_lines` does the same for TOML, leaving alone the lines of a multi-line string
(between triple quotes).

It does NOT parse YAML or TOML: a comment after a value on its line (``key: v  # note``) is read as text.
"""

from __future__ import annotations

import re

from analyzer.detection.regions import in_spans

__all__ = ["comment_lines", "in_spans", "toml_comment_lines"]

#: a line that opens a block scalar: ``key: |``, ``- >-``, ``text: |2  # comment``
_BLOCK_OPENER = re.compile(r"(?:^|[:\-][ \t])[ \t]*[|>][-+0-9]*[ \t]*(?:#.*)?$")


def comment_lines(text: str) -> list[tuple[int, int]]:
    """(start, end) of every whole-line comment outside a block scalar, in order."""
    out: list[tuple[int, int]] = []
    scalar_parent = -1  # the indentation of the line that opened the block scalar we are in, or -1
    quote = ""  # the quote of a quoted scalar still open at the end of the line before
    pos = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        bare = body.lstrip(" ")
        indent = len(body) - len(bare)
        start, pos = pos, pos + len(line)
        if quote:
            quote = "" if _closes(body, quote) else quote
            continue  # a line of a quoted scalar: text
        if scalar_parent >= 0:
            if not bare.strip() or indent > scalar_parent:
                continue  # a line of the scalar (blank lines too): text, whatever it starts with
            scalar_parent = -1
        if bare.startswith("#"):
            out.append((start, start + len(body)))
        elif _BLOCK_OPENER.search(bare):
            scalar_parent = indent
        elif (m := _QUOTED_OPEN.search(bare)) and not _closes(bare[m.end() :], m.group(1)):
            quote = m.group(1)
    return out


#: a value that opens with a quote: ``key: "…``, ``- '…``
_QUOTED_OPEN = re.compile(r"(?:^|[:\-][ \t])[ \t]*([\"'])")


def _closes(rest: str, quote: str) -> bool:
    """``rest`` (after an opening ``quote``) holds the closing one (``\\"`` escapes a double quote,
    ``''`` stands for a single one)."""
    if quote == '"':
        return re.search(r'(?<!\\)(?:\\\\)*"', rest) is not None
    return "'" in rest.replace("''", "")


#: a multi-line string's quote, or a one-line string (its quotes inside are its text)
_TOML_STRING = re.compile(r'"""|\'\'\'|"(?:[^"\\\\\n]|\\.)*"|\'[^\'\n]*\'')


def toml_comment_lines(text: str) -> list[tuple[int, int]]:
    """(start, end) of every whole-line ``#`` comment of a TOML file outside its multi-line strings
    (lines split at ``\\n`` only, as TOML does)."""
    out: list[tuple[int, int]] = []
    open_quote = ""  # the triple quote of a multi-line string still open at the line's start
    pos = 0
    for line in text.split("\n"):
        start, pos = pos, pos + len(line) + 1
        body = line.rstrip("\r")
        if not open_quote and body.lstrip(" \t").startswith("#"):
            out.append((start, start + len(body)))
            continue
        for m in _TOML_STRING.finditer(body):
            q = m.group()
            if open_quote:
                open_quote = "" if q == open_quote else open_quote
            elif q in ('"""', "'''"):
                open_quote = q
    return out
