"""Slots whose name says nothing (``${EXPR_1}``, ``{{ value }}``, ``{0}``), judged by their label as a name.

Extracted prompts stand an elided expression in for what the app renders (``Current branch:
${EXPR_1}``); only the label still tells what it is. :func:`by_label` takes the label's key (the
last words before its colon, parentheses left out) as if it were the slot's name and asks
:func:`.names.name_verdict`: ``Current branch:`` reads like ``{current_branch}`` (a snapshot of
the working copy), ``Main branch:`` like ``{main_branch}`` (fixed per repository: nothing).

It does NOT read slots with a telling name (:mod:`.names` does) or values that are not slots.
"""

from __future__ import annotations

import re

from analyzer.detection import names

#: the words of a name that names nothing
_OPAQUE = {"expr", "expression", "value", "val", "var", "placeholder", "slot", "arg", "x", "v", "param"}
_PARENS = re.compile(r"\([^()\n]*\)")
#: the key of a label: its last words right before a colon (or "is")
_KEY = re.compile(r"(?i)([A-Za-z][A-Za-z _'-]{0,40}?)\s*(?:[:：=]|\bis)\s*$")


def opaque(expr: str) -> bool:
    """``EXPR_1``, ``value``, ``0``: the slot's name says nothing of what it holds."""
    bare = expr.strip(" {}$")
    ws = names.words(bare)
    return bool(bare) and all(w in _OPAQUE or w.isdigit() for w in ws) and (bool(ws) or bare.isdigit())


def by_label(expr: str, label: str) -> str | None:
    """Why an opaque slot is volatile by its label's key read as its name, or None."""
    if not opaque(expr):
        return None
    m = _KEY.search(_PARENS.sub(" ", label.rsplit("\n", 1)[-1]))
    if not m:
        return None
    key = "_".join(m.group(1).split()[-3:])
    v = names.name_verdict(key)
    return f"an elided expression under `{m.group(1).strip()}`: {v.reason.split(': ', 1)[-1]}" if v else None
