"""The labels that make a number before them a per-request reading ("Tokens used: ", "Free memory: ").

:data:`READING_BEFORE` is the pattern (ending at the value); :func:`label_before` searches a
window for it, the regex skipped where an ASCII window cannot hold a match (:func:`_may_hold`).

It does NOT read the value itself (:func:`.session.quantity` does).
"""

from __future__ import annotations

import re

from analyzer.detection.prefilters import holds_any

#: "… for this session": the scope a reading is counted over, between its label and its value
SCOPE = r"(?:\s+(?:(?:for|in|of|during)\s+(?:this|the|the current|your)|this)\s+(?:session|conversation|chat|request|task|run|thread))?"
READING_BEFORE = re.compile(
    r"(?i)(?:\btokens?\b[\w ]{0,20}\b(?:used|left|remaining|usage|consumed|spent|so far)"
    r"|\b(?:used|remaining|left|consumed)\s+tokens?|\btoken\s+(?:usage|count)|\bcontext(?:\s+window)?\s+usage"
    r"|\b(?:free|available|avail|used|remaining)\s+(?:memory|mem|ram|vram|disk|storage|space|swap)(?:\s+space)?"
    r"|\b(?:memory|mem|ram|vram|disk|swap)\s*(?:free|available|usage|used|left)"
    r"|\b(?:credits?|quota|requests?|budget)\s+(?:left|remaining|used)"
    # money spent or left, machine load: "Cost so far: $1.37", "Remaining budget: $4.20", "CPU usage: 42%"
    r"|\b(?:total\s+)?(?:cost|spend|spent|spending|charges)\s+(?:so\s+far|to\s+date)|\b(?:remaining|used|left)\s+budget"
    r"|\b(?:current|account|remaining)\s+balance|\b(?:cpu|gpu)\s+(?:usage|load|utili[sz]ation)|\bload\s+average"
    r"|\bcurrent\s+load"
    r"|\b(?:coordinates?|latitude|longitude|lat|lon|lng|gps)\b[^\n]{0,24}?(?:\d[\d.]*\s*,\s*)?)"
    + SCOPE
    + r"(?:\s+(?:is|are|was))?\W{0,4}$"
    r"|<[\w:.-]*(?:token|budget|usage|remaining)[\w:.-]*>\s*$"
)
#: the words one alternative of :data:`READING_BEFORE` needs alone: "token" (the first three, and
#: the tag's), "budget", "balance", "cpu"/"gpu", "load" (average, current load), and the
#: coordinates' words ("coordinates", "latitude" and "longitude" hold "coord", "lat", "lon")
_ALONE = ("token", "budget", "balance", "cpu", "gpu", "load", "coord", "lat", "lon", "lng", "gps")
#: the pairs the others need, one word of each tuple: memory free or used (a superset of both
#: orders: "memory", "vram", "storage" hold "mem", "ram", "stor"), credits left, cost so far / to date
_PAIRS = (
    (
        ("mem", "ram", "disk", "swap", "stor", "space"),
        ("free", "avail", "used", "remaining", "usage", "left"),
    ),
    (("credit", "quota", "request"), ("left", "remaining", "used")),
    (("cost", "spen", "charges"), ("far", "date")),
    (("context",), ("usage",)),
)


def _may_hold(low: str) -> bool:
    """Whether a lowered ASCII window holds every literal of some alternative of
    :data:`READING_BEFORE` (each needs a word of :data:`_ALONE` or both of a pair of :data:`_PAIRS`;
    the tag's alternative needs "<" and a word of its own, "usage" or "remaining" beside "token" and
    "budget"): where it does not, the regex cannot match."""
    for w in _ALONE:  # plain loops: a generator per test would cost more than the tests
        if w in low:
            return True
    for first, second in _PAIRS:
        for w in first:
            if w in low:
                for v in second:
                    if v in low:
                        return True
                break  # one word of ``first`` is enough: the pair turns on ``second``
    return "<" in low and ">" in low and ("usage" in low or "remaining" in low)


#: the words an alternative of :data:`READING_BEFORE` (the coordinates' and the tag's aside) can end
#: with, its scope and "is" / "are" / "was" included, by their last two letters
_ENDINGS: dict[str, tuple[str, ...]] = {}
for _w in (
    "used consumed left remaining usage storage average spent count far token tokens memory mem ram disk "
    "space balance swap free available budget date load thread utilisation utilization session "
    "conversation chat request task run is are was"
).split():
    _ENDINGS[_w[-2:]] = _ENDINGS.get(_w[-2:], ()) + (_w,)
#: the ASCII characters ``\W`` matches
_ASCII_NONWORD = "".join(chr(i) for i in range(128) if not (chr(i).isalnum() or chr(i) == "_"))
_COORD_WORDS = ("coord", "lat", "lon", "lng", "gps")


def _may_end(window: str, low: str) -> bool:
    """Whether an ASCII window with no line break can end as a :data:`READING_BEFORE` match does:
    each alternative but two ends in one of :data:`_ENDINGS`, then at most 4 non-word characters;
    the coordinates' needs one of their words anywhere, the tag's a ">"."""
    tail = low.rstrip(_ASCII_NONWORD)
    if len(window) - len(tail) <= 4 and tail.endswith(_ENDINGS.get(tail[-2:], ())):
        return True
    return ">" in window or holds_any(low, _COORD_WORDS)


def label_before(text: str, lo: int, hi: int) -> bool:
    """``READING_BEFORE.search(text, lo, hi)``, the regex skipped where an ASCII window (lowered:
    exact, as no case folding pairs an ASCII letter with a non-ASCII one there) cannot hold a match:
    it cannot end as one does (:func:`_may_end`) or lacks the words one needs (:func:`_may_hold`)."""
    window = text[lo:hi]
    if window.isascii():
        low = window.lower()
        if ("\n" not in window and not _may_end(window, low)) or not _may_hold(low):
            return False
    return bool(READING_BEFORE.search(text, lo, hi))
