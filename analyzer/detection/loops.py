"""A template loop over per-user or per-session data, read as one rendered block.

``{% for item in customer.orders %}…{% endfor %}`` (Jinja), ``{{range .CurrentState.Memories}}…{{end}}``
(Go templates) and ``{{#each recent_chats}}…{{/each}}`` (Handlebars) render one line per item of what
they loop over: when that is volatile by its name (:func:`.names.judge_expression`), the whole loop,
from its opening tag to its closing one, is one ``placeholder`` candidate whose shape says why.

A slot on the loop's own item (``{{ m.timestamp }}`` inside ``{% for m in messages %}``) is judged by
its loop, never by its field's name: :func:`item_field`.

It does NOT judge a loop over fixed data (``{% for tool in tools %}``), nor a loop left unclosed.
"""

from __future__ import annotations

import re

from analyzer.detection.candidate import HIGH, Candidate
from analyzer.detection.names import judge_expression

_JINJA = re.compile(r"\{%-?[ \t]*for[ \t]+[\w, ()]+?[ \t]+in[ \t]+(?P<e>[^%\n]{1,120}?)[ \t]*-?%\}")
#: a Jinja ``for`` or ``endfor`` tag (nested loops close in order)
_JINJA_TAG = re.compile(r"\{%[-+]?\s*(?P<w>for|endfor)\b(?:[^%]|%(?!\}))*%\}")
_GO = re.compile(
    r"\{\{-?[ \t]*range[ \t]+(?:\$\w+(?:[ \t]*,[ \t]*\$\w+)?[ \t]*:?=[ \t]*)?(?P<e>[^{}\n]{1,120}?)[ \t]*-?\}\}"
)
#: Go template actions that open a block closed by ``{{end}}``, and that close one
_GO_ACTION = re.compile(r"\{\{-?[ \t]*(?P<w>if|range|with|block|define|end)\b[^{}\n]*\}\}")
_EACH = re.compile(r"\{\{~?#each[ \t]+(?P<e>[^{}\n]{1,120}?)[ \t]*~?\}\}")
#: a Handlebars ``#each`` or ``/each`` tag
_EACH_TAG = re.compile(r"\{\{~?(?P<w>#each|/each)\b[^{}\n]*\}\}")


def _block_end(tags: re.Pattern, closer: str, text: str, at: int) -> int:
    """Where the tag closing the block opened before ``at`` ends (nested blocks counted), or -1."""
    depth = 1
    for m in tags.finditer(text, at):
        depth += -1 if m.group("w") == closer else 1
        if depth == 0:
            return m.end()
    return -1


def loop_at(text: str, at: int, out: list[Candidate]) -> int:
    """A loop over volatile data opening at text[at] ("{"); returns where it ends (``at`` when none)."""
    for opening, tags, closer in (
        (_JINJA, _JINJA_TAG, "endfor"),
        (_GO, _GO_ACTION, "end"),
        (_EACH, _EACH_TAG, "/each"),
    ):
        m = opening.match(text, at)
        if not m:
            continue
        v = judge_expression(m.group("e"))
        if v is None:
            return at
        end = _block_end(tags, closer, text, m.end())
        if end < 0:
            return at
        out.append(
            Candidate(
                "placeholder", at, end, HIGH, f"a loop over {v.reason.split(': ', 1)[-1]}", m.group("e")
            )
        )
        return end
    return at


def item_field(text: str, at: int, expr: str, memo: dict) -> bool:
    """``expr`` (``m.timestamp_iso``) reads a field of the item of a Jinja loop open at ``at``
    (``{% for m in recent_messages %}``): the item's fields are what the loop renders."""
    root = expr.split(".", 1)[0].strip()
    if not root.isidentifier() or root == expr.strip():
        return False
    loops = memo.get(("jinja-loops",))
    if loops is None:
        loops = memo[("jinja-loops",)] = _jinja_loops(text)
    return any(a <= at < b and root in names for a, b, names in loops)


def _jinja_loops(text: str) -> tuple[tuple[int, int, frozenset[str]], ...]:
    """Each closed Jinja ``for`` block of ``text`` (one left open is no loop, as in :func:`loop_at`):
    where its body starts and ends and the names it binds (``for k, m in …``); read once per text."""
    out, open_ = [], []
    for m in _JINJA_TAG.finditer(text):  # one pass, a stack of the blocks still open
        if m.group("w") == "for":
            head = m.group(0).split(" in ", 1)[0].split("for", 1)[-1]
            open_.append((m.end(), frozenset(re.findall(r"\w+", head))))
        elif open_:
            start, names = open_.pop()
            out.append((start, m.end(), names))
    return tuple(out)
