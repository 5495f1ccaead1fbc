"""Dates and times that recur in one text: the same value again, or a run of them.

:func:`again` takes the kept values of one text and returns every other occurrence of a date or
time among them, as its own finding: a template that renders today's date twice renders both.
:func:`without_series` drops unlabelled dates and times that come three or more on nearby lines
(a chat log, a schedule, example output): one "now" is rendered once, not as a list.

It does NOT find a first value (that is :mod:`.judge`'s) nor match values that merely look alike.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterable

from analyzer.detection.calendar import WEEKDAY_WORDS
from analyzer.detection.candidate import Candidate

KINDS = ("date", "time")
#: a shorter value ("2:30 PM") recurs by chance
MIN_CHARS = 8


def again(text: str, kept: Iterable[tuple[Candidate, str]]) -> list[tuple[Candidate, str]]:
    """Each further occurrence of a kept date or time value, not overlapping a kept span."""
    kept = list(kept)
    covered = _Covered(sorted((c.start, c.end) for c, _ in kept))
    seen: set[str] = set()
    out: list[tuple[Candidate, str]] = []
    for c, _ in kept:
        value = text[c.start : c.end]
        if c.kind not in KINDS or len(value) < MIN_CHARS or value in seen or value.lower() in WEEKDAY_WORDS:
            continue  # a weekday alone ("Thursday") recurs by chance, as a short value does
        seen.add(value)
        k = text.find(value)
        while k >= 0:
            end = k + len(value)
            if _bounded(text, k, end) and not covered.overlaps(k, end):
                line = text.count("\n", 0, c.start) + 1
                out.append(
                    (Candidate(c.kind, k, end, c.severity, "repeat"), f"the same value as on line {line}")
                )
                covered.add(k, end)
            k = text.find(value, end)
    return out


class _Covered:
    """Spans already taken, asked whether a new one overlaps any (by bisection: a text repeating one
    date thousands of times must not be quadratic). The kept spans are merged once; the repeats
    added later are short (dates and times), so only their few neighbours are looked at."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        self.starts, self.ends = [], []
        for a, b in spans:
            if self.ends and a < self.ends[-1]:
                self.ends[-1] = max(self.ends[-1], b)
            else:
                self.starts.append(a)
                self.ends.append(b)
        self.added: list[tuple[int, int]] = []
        self.longest = 0

    def overlaps(self, k: int, end: int) -> bool:
        i = bisect_left(self.starts, end)  # merged spans before i start before ``end``
        if i and self.ends[i - 1] > k:
            return True
        j = bisect_left(self.added, (end,))
        while j > 0 and self.added[j - 1][0] > k - self.longest:
            j -= 1
            if self.added[j][1] > k:
                return True
        return False

    def add(self, k: int, end: int) -> None:
        insort(self.added, (k, end))
        self.longest = max(self.longest, end - k)


def without_series(
    text: str, kept: list[tuple[Candidate, str]], unlabelled: frozenset[str]
) -> list[tuple[Candidate, str]]:
    """``kept`` less the runs of three or more dates or times kept only for their shape
    (``unlabelled`` reasons), each within two lines of the previous one."""
    weak = [i for i, (c, why) in enumerate(kept) if c.kind in KINDS and why in unlabelled]
    if len(weak) < 3:
        return kept
    drop: set[int] = set()
    run = [weak[0]]
    line = text.count("\n", 0, kept[weak[0]][0].start)
    for i in weak[1:]:
        at = line + text.count("\n", kept[run[-1]][0].start, kept[i][0].start)
        if at - line <= 2 and at > line:
            run.append(i)
        else:
            drop.update(run if len(run) >= 3 else ())
            run = [i]
        line = at
    drop.update(run if len(run) >= 3 else ())
    return [k for i, k in enumerate(kept) if i not in drop]


def _bounded(text: str, start: int, end: int) -> bool:
    before = text[start - 1 : start]
    after = text[end : end + 1]
    return not (before.isalnum() or after.isalnum())
