"""Dates and times that recur in one text: the same value again, or a run of them.

:func:`again` takes the kept values of one text and returns every other occurrence of a date or
time among them, as its own finding: a template that renders today's date twice renders both.
:func:`without_series` drops unlabelled dates and times that come three or more on nearby lines
(a chat log, a schedule, example output): one "now" is rendered once, not as a list.

It does NOT find a first value (that is :mod:`.judge`'s) nor match values that merely look alike.
"""

from __future__ import annotations

from collections.abc import Iterable

from analyzer.detection.candidate import Candidate

KINDS = ("date", "time")
#: a shorter value ("2:30 PM") recurs by chance
MIN_CHARS = 8


def again(text: str, kept: Iterable[tuple[Candidate, str]]) -> list[tuple[Candidate, str]]:
    """Each further occurrence of a kept date or time value, not overlapping a kept span."""
    kept = list(kept)
    spans = sorted((c.start, c.end) for c, _ in kept)
    seen: set[str] = set()
    out: list[tuple[Candidate, str]] = []
    for c, _ in kept:
        value = text[c.start : c.end]
        if c.kind not in KINDS or len(value) < MIN_CHARS or value in seen:
            continue
        seen.add(value)
        k = text.find(value)
        while k >= 0:
            end = k + len(value)
            if _bounded(text, k, end) and not any(a < end and k < b for a, b in spans):
                line = text.count("\n", 0, c.start) + 1
                out.append(
                    (Candidate(c.kind, k, end, c.severity, "repeat"), f"the same value as on line {line}")
                )
                spans.append((k, end))
            k = text.find(value, end)
    return out


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
