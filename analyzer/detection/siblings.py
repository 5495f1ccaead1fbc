"""A slot of no telling name in a block of ``Key: {slot}`` lines whose other slots are rendered per
request: rendered with them ("- 地点：{location_name}", "- 时间：{time}", "- 对话中NPC：{active_npc}").

:func:`block_siblings` reads the kept findings: where at least two kept slots are each the whole value
of a ``Key: value`` line of one block (lines with no blank line or heading between) and they outnumber
the block's slots of no verdict, each of those is found too. A block's slots come from one source (the game's
state, the environment, the user's profile), so a name the vocabularies miss is told by its siblings.

It does NOT take content slots (``{question}``), settings and the deployment's own (``{model}``,
``{{ agent.id }}``), expressions, or slots inside a sentence, nor
judge examples: the kept siblings were judged, and a block the judge dropped has none.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from analyzer.detection.candidate import Candidate
from analyzer.detection.names import is_setting, words
from analyzer.detection.slotcontext import content

#: a list or key line whose whole value is one slot: "- **地点**：{x}", "Time: {{ t }}"
_KEY_SLOT_LINE = re.compile(
    r"[ \t>]*(?:[-*•+][ \t]+)?(?:\*\*|__)?[^\n:：{}<>]{1,40}?(?:\*\*|__)?[ \t]*[:：][ \t]*\Z"
)
_AFTER = re.compile(r"[ \t.,;。，\r]*\Z")
#: a blank line (spaces or a CR allowed) or a heading line starts a new block
_BREAK = re.compile(r"\n[ \t]*\r?\n|\n[ \t]*#")
#: the deployment's own: the agent, the model, its tools (configuration, LABELS.md)
_FIXED = frozenset(
    "agent bot assistant model models tool tools persona character char version type mode".split()
)
REASON = "a line of a block whose other slots are rendered per request"


def _key_slot(text: str, c: Candidate) -> tuple[int, int] | None:
    """The line bounds when ``c`` is the whole value of a ``Key: value`` line, else None."""
    ls = text.rfind("\n", 0, c.start) + 1
    le = text.find("\n", c.end)
    le = len(text) if le < 0 else le
    if not _KEY_SLOT_LINE.match(text, ls, c.start) or not _AFTER.match(text, c.end, le):
        return None
    return ls, le


def _fixed(expr: str) -> bool:
    """Content, a setting or the deployment's own (``{{ agent.id }}``, ``{{ model }}``), or an expression."""
    ws = set(words(expr))
    return (
        not expr.replace(".", "").replace("_", "").isalnum()
        or content(expr)
        or is_setting(expr)
        or bool(ws & _FIXED)
    )


def _blocks(text: str) -> list[int]:
    """Where each block starts: after a blank line, at a heading line (in order)."""
    return [0] + [m.end() - (m.group().endswith("#")) for m in _BREAK.finditer(text)]


def _block(starts: list[int], ls: int) -> int:
    """The start of the block the line at ``ls`` belongs to."""
    return starts[bisect_right(starts, ls) - 1]


def block_siblings(
    text: str, cands: list[Candidate], kept: list[tuple[Candidate, str]]
) -> list[tuple[Candidate, str]]:
    """The unjudged slots rendered with the kept ones of their block (see the module docstring)."""
    lines = [line for c, _ in kept if c.kind == "placeholder" and (line := _key_slot(text, c))]
    if len(lines) < 2:
        return []
    starts = _blocks(text)
    flagged: dict[int, int] = {}  # block start -> kept key-line slots
    for line in lines:
        b = _block(starts, line[0])
        flagged[b] = flagged.get(b, 0) + 1
    if not any(n >= 2 for n in flagged.values()):
        return []
    spans = sorted((c.start, c.end) for c, _ in kept)
    reach = []  # the furthest end of the kept spans so far, for a bisection
    for _, b in spans:
        reach.append(max(b, reach[-1]) if reach else b)
    loose: dict[int, list[Candidate]] = {}
    for c in cands:
        if c.kind != "placeholder" or c.shape or _fixed(c.expr):
            continue
        i = bisect_right(spans, (c.end,)) - 1  # the last kept span starting before c ends
        if (i >= 0 and reach[i] > c.start) or not (line := _key_slot(text, c)):
            continue  # kept itself, or inside or across a kept value
        loose.setdefault(_block(starts, line[0]), []).append(c)
    out = []
    for b, found in loose.items():
        if flagged.get(b, 0) >= 2 and flagged[b] > len(found):
            out += [(c, REASON) for c in found]
    return out
