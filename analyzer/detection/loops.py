"""A template loop over per-user or per-session data, read as one rendered block.

``{% for item in customer.orders %}…{% endfor %}`` (Jinja), ``{{range .CurrentState.Memories}}…{{end}}``
(Go templates) and ``{{#each recent_chats}}…{{/each}}`` (Handlebars) render one line per item of what
they loop over: when that is volatile by its name (:func:`.names.judge_expression`), the whole loop,
from its opening tag to its closing one, is one ``placeholder`` candidate whose shape says why.

It does NOT judge a loop over fixed data (``{% for tool in tools %}``), nor a loop left unclosed.
"""

from __future__ import annotations

import re

from analyzer.detection.candidate import HIGH, Candidate
from analyzer.detection.names import judge_expression

_JINJA = re.compile(r"\{%-?[ \t]*for[ \t]+[\w, ()]+?[ \t]+in[ \t]+(?P<e>[^%\n]{1,120}?)[ \t]*-?%\}")
_JINJA_END = re.compile(r"\{%-?[ \t]*endfor[ \t]*-?%\}")
_GO = re.compile(
    r"\{\{-?[ \t]*range[ \t]+(?:\$\w+(?:[ \t]*,[ \t]*\$\w+)?[ \t]*:?=[ \t]*)?(?P<e>[^{}\n]{1,120}?)[ \t]*-?\}\}"
)
#: Go template actions that open a block closed by ``{{end}}``, and that close one
_GO_ACTION = re.compile(r"\{\{-?[ \t]*(?P<w>if|range|with|block|define|end)\b[^{}\n]*\}\}")
_EACH = re.compile(r"\{\{#each[ \t]+(?P<e>[^{}\n]{1,120}?)[ \t]*\}\}")
_EACH_END = re.compile(r"\{\{/each[ \t]*\}\}")


def _go_end(text: str, at: int) -> int:
    """Where the ``{{end}}`` closing the block opened before ``at`` ends, or -1."""
    depth = 1
    for m in _GO_ACTION.finditer(text, at):
        depth += -1 if m.group("w") == "end" else 1
        if depth == 0:
            return m.end()
    return -1


def loop_at(text: str, at: int, out: list[Candidate]) -> int:
    """A loop over volatile data opening at text[at] ("{"); returns where it ends (``at`` when none)."""
    for opening, closing in ((_JINJA, _JINJA_END), (_GO, None), (_EACH, _EACH_END)):
        m = opening.match(text, at)
        if not m:
            continue
        v = judge_expression(m.group("e"))
        if v is None:
            return at
        if closing is None:
            end = _go_end(text, m.end())
        else:
            close = closing.search(text, m.end())
            end = close.end() if close else -1
        if end < 0:
            return at
        out.append(
            Candidate(
                "placeholder", at, end, HIGH, f"a loop over {v.reason.split(': ', 1)[-1]}", m.group("e")
            )
        )
        return end
    return at
