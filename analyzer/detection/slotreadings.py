"""A slot of no telling name that a reading label makes a per-request value.

:func:`reading` tells ``Tokens used: {x}``, ``Messages so far: ${n}``, ``{x} requests left today``,
``Battery: {x}%``, ``Free memory: {x}`` and ``State: {x}`` (the labels :mod:`.session` reads
rendered numbers and state JSON under) from a limit or a setting (``Max tokens: {x}``,
``Write {x} words``).

It does NOT judge named slots (their names say more: :mod:`.names`) nor rendered values.
"""

from __future__ import annotations

import re

from analyzer.detection import session
from analyzer.detection.prefilters import ascii_words
from analyzer.detection.reading_labels import READING_BEFORE, label_before

#: labels of a count the session keeps, besides :data:`.reading_labels.READING_BEFORE`'s
_COUNT_BEFORE = re.compile(
    r"(?i)(?:\b(?:messages?|turns?|steps?|requests?|calls?|quer(?:y|ies)|questions?|credits?|cost|spend|spent"
    r"|tokens?|iterations?|attempts?|retries)\b[^\n:]{0,16}?\bso far"
    r"|\b(?:message|turn|request|call|query|token|step|iteration|attempt|retry)s?[ _-]?(?:count|number|no\.|#)"
    r"|\b(?:memory|cpu|gpu|disk|context(?:\s+window)?)\s+(?:usage|load|used)|\bbattery(?:\s+level)?"
    r"|\belapsed(?:\s+time)?|\buptime|\bload average)\W{0,4}$"
)
#: a literal each :data:`_COUNT_BEFORE` alternative holds, lowered
_COUNT_WORDS = (
    "so far",
    "count",
    "number",
    "no.",
    "#",
    "usage",
    "load",
    "used",
    "battery",
    "elapsed",
    "uptime",
)
#: the same after the slot ("{x} messages so far", "{x} requests left today")
_COUNT_AFTER = re.compile(
    r"(?i)[ \t]*(?:/[ \t]*\S+[ \t]*)?(?:more[ \t]+)?(?:messages?|turns?|steps?|requests?|calls?|quer(?:y|ies)"
    r"|credits?|tokens?|attempts?|retries|iterations?)[ \t]+(?:so far|left|remaining|used)\b"
)
#: a bound or a setting, not a reading ("Max tokens:", "at most", "per request")
_LIMIT = re.compile(
    r"(?i)\b(?:max(?:imum)?|min(?:imum)?|limits?|at most|up to|per|each|every|allowed|default)\b"
)


#: a step of a run counted against its total: "Step {x} of {n}", "Iteration {i}/{n}", "Attempt #{k} of"
_PROGRESS_BEFORE = re.compile(r"(?i)\b(?:step|iteration|turn|attempt|round|retry|try)[ \t]*#?[ \t]*$")
_OF_AFTER = re.compile(r"[ \t]*(?:of|/)[ \t]*(?:\d|[{$<%])")


def _found(text: str, lo: int, hi: int, rx: re.Pattern, words: tuple[str, ...]) -> bool:
    """``rx.search(text, lo, hi)``, skipped where an ASCII window (lowered: exact) has none of ``words``."""
    return ascii_words(text, lo, hi, words) is not False and rx.search(text, lo, hi) is not None


def labels_a_reading(before: str) -> bool:
    """The text right before a slot is a reading's label ("Tokens left: ", "Messages so far: ")."""
    return bool(READING_BEFORE.search(before) or _COUNT_BEFORE.search(before))


def reading(text: str, start: int, end: int, near: str) -> str | None:
    """Why the slot at text[start:end] is a reading per request by its label, or None; ``near``
    is the label's last clause."""
    nl = text.rfind("\n", max(0, start - 64), start)
    line = nl + 1 if nl >= 0 else max(0, start - 64)  # no line start that near: read 64 back, no further
    lo = max(line, start - 48)
    if _LIMIT.search(near):
        return None
    if label_before(text, lo, start) or _found(text, lo, start, _COUNT_BEFORE, _COUNT_WORDS):
        return "a reading per request, by its label"
    if session.READING_AFTER.match(text, end) or _COUNT_AFTER.match(text, end):
        return "a reading per request, by the words after it"
    if _PROGRESS_BEFORE.search(text, lo, start) and _OF_AFTER.match(text, end):
        return "a step of the run, counted against its total"
    if nl >= 0 and line and not text[line:start].strip():  # "Current state:" on the line above
        line = max(text.rfind("\n", max(0, line - 65), line - 1) + 1, line - 64)
    if _found(text, line, start, session.STATE_LABEL, ("state",)):
        return "the state rendered under its label"
    return None
