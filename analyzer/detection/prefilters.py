"""Exact cheap tests that let a detector skip a regex or a pass over the whole text.

A ``str.find`` miss on 20 KB of prose costs about as much as a short regex over a window; these
helpers answer from literals where that is exact: :func:`ascii_words` (an ASCII window lowered
is exact, so the words in it answer a case-blind alternation of them) and :func:`find_led` (a
needle found by jumping to its rare character); :func:`holds_any` and :func:`finds_any` are
``any(…)`` over words as plain loops (a generator object per call costs more than the tests).

It does NOT know any rule: the words and keys are the callers', next to their regexes.
"""

from __future__ import annotations


def ascii_words(text: str, lo: int, hi: int, words: tuple[str, ...]) -> bool | None:
    """Whether text[lo:hi], lowered, holds one of ``words`` (lower case); None where the window
    is not ASCII (case-blind matching can pair a non-ASCII letter with an ASCII one there)."""
    window = text[lo:hi]
    if not window.isascii():
        return None
    window = window.lower()
    for w in words:
        if w in window:
            return True
    return False


def find_led(text: str, needle: str, lead: int = 0, tries: int = 8, start: int = 0) -> int:
    """``text.find(needle, start)``, by jumping (``memchr``) to each ``needle[lead]`` for its first
    ``tries`` places: a miss of a needle with a rare character costs next to nothing instead of a skip
    loop over the whole text. Exact: every occurrence holds that character ``lead`` into it, so none
    before the last place tried means the first is at or after it (``str.find`` from there)."""
    c = needle[lead]
    k = text.find(c, start + lead)
    for _ in range(tries):
        if k < 0 or text.startswith(needle, k - lead):
            return k if k < 0 else k - lead
        k = text.find(c, k + 1)
    return k if k < 0 else text.find(needle, k - lead)


def holds_any(low: str, words: tuple[str, ...]) -> bool:
    """``any(w in low for w in words)``, as a plain loop: no generator object for each call."""
    for w in words:
        if w in low:
            return True
    return False


def finds_any(text: str, lo: int, hi: int, words: tuple[str, ...]) -> bool:
    """``any(text.find(w, lo, hi) >= 0 for w in words)``, as a plain loop (no slice, no generator)."""
    for w in words:
        if text.find(w, lo, hi) >= 0:
            return True
    return False


def led_by_first(alternation: str) -> str:
    """The top-level alternatives of the regex ``alternation`` grouped by their first character
    (``user|users|visitor`` → ``u(?:ser|sers)|visitor``): sre then passes a group over at its first
    character, not each alternative in turn. The same matches, in the same order: alternatives led
    by different characters never match at one place, and a group keeps its alternatives' order.
    Each alternative must begin with a plain character that no quantifier follows."""
    alts, depth, cur = [], 0, []
    for ch in alternation:
        depth += (ch in "([") - (ch in ")]")
        if ch == "|" and depth == 0:
            alts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    alts.append("".join(cur))
    groups: dict[str, list[str]] = {}
    for a in alts:
        if not a or a[0] in "\\[(.^$" or a[1:2] in ("?", "*", "+", "{"):
            raise ValueError(f"not led by a plain character: {a!r}")
        groups.setdefault(a[0], []).append(a[1:])
    return "|".join(c + (f"(?:{'|'.join(rest)})" if len(rest) > 1 else rest[0]) for c, rest in groups.items())
