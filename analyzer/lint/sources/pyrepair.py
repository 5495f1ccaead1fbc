"""Python excerpts that do not parse as they stand, mended so that their prompts can be read.

A file cut out of a larger one often starts indented (a method body), ends inside a call or a
triple-quoted string, or marks dropped lines with ``[…]``. :func:`mend` takes the text and the
:class:`SyntaxError` it raised and returns a text that may parse: every character keeps its
offset, except that an indented excerpt gets one ``if 1:`` line in front (its length is returned).

It does NOT mend anything else (any other syntax error stays one) nor parse the text itself. A
file whose only fault is an unclosed bracket or triple quote at its end reads as a cut-off excerpt
and is linted as mended.
"""

from __future__ import annotations

import io
import re
import tokenize

WRAPPER = "if 1:\n"
#: a line that only marks where lines were left out: "[…]", "...", "# …", "<…>"
_ELISION = re.compile(r"[ \t]*(?:\[\s*(?:…|\.\.\.)\s*\]|<\s*(?:…|\.\.\.)\s*>|…+)[ \t]*")
_PAIRS = {"(": ")", "[": "]", "{": "}"}
_TRIPLE = re.compile(r"[rRbBuUfF]*(\"\"\"|''')")


def _line_start(text: str, lineno: int) -> int:
    at = 0
    for _ in range(lineno - 1):
        nl = text.find("\n", at)
        if nl < 0:
            return -1
        at = nl + 1
    return at


def _unclosed(text: str) -> str:
    """The closing brackets an excerpt cut off inside a call or a literal lacks, innermost first."""
    stack: list[str] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.OP and tok.string in _PAIRS:
                stack.append(_PAIRS[tok.string])
            elif tok.type == tokenize.OP and tok.string in ")]}" and stack and stack[-1] == tok.string:
                stack.pop()
    except (tokenize.TokenError, SyntaxError):
        pass
    return "".join(reversed(stack))


def _opener_room(text: str, ls: int) -> int | None:
    """The start of the comment or elision line right above the line at ``ls`` (blank lines between
    allowed) when it is long enough to hold ``if 1:``, or None."""
    at = ls
    while at > 0:
        above = text.rfind("\n", 0, at - 1) + 1
        line = text[above : at - 1]
        if line.strip():
            bare = line.strip()
            if (bare.startswith("#") or _ELISION.fullmatch(line)) and len(line) >= len(WRAPPER) - 1:
                return above
            return None
        at = above
    return None


def mend(text: str, exc: SyntaxError, wrapped: bool) -> tuple[str, bool] | None:
    """(the mended text, whether it is now wrapped in :data:`WRAPPER`), or None when nothing fits."""
    msg, lineno = exc.msg or "", exc.lineno or 0
    if msg == "unexpected indent" and not wrapped and text[:1] in " \t":
        return WRAPPER + text, True
    ls = _line_start(text, lineno) if lineno else -1
    if ls < 0:
        return None
    le = text.find("\n", ls)
    line = text[ls : le if le >= 0 else len(text)]
    if msg == "unexpected indent" and (at := _opener_room(text, ls)) is not None:
        # an indented part after top-level code ("    # ... (omitted) ...\n    def f(self):"): the
        # comment or elision line above becomes the block's opener, each offset kept
        end = text.find("\n", at)
        return text[:at] + WRAPPER[:-1].ljust(end - at) + text[end:], wrapped
    if _ELISION.fullmatch(line.rstrip("\r")):
        k = ls + len(line) - len(line.lstrip(" \t"))
        return text[:k] + "#" + text[k + 1 :], wrapped
    if msg.endswith("was never closed"):
        closers = _unclosed(text)
        if closers:
            return text + ("" if text.endswith("\n") else "\n") + closers + "\n", wrapped
    if msg.startswith("unterminated triple-quoted string"):
        m = _TRIPLE.search(line, max(0, (exc.offset or 1) - 1))
        if m:
            return text + ("" if text.endswith("\n") else "\n") + m.group(1), wrapped
    return None
