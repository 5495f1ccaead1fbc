"""Where two requests' prefixes fork, and why: the first differing string and the
volatile value (if any) that the difference falls in.

Given two bodies and their segments and the number of leading segments they share, the
fork is the first string field of the next segment whose text differs; its first
differing character is located, and the detectors of :mod:`analyzer.detect` run on a
small window around it (bounded work however long the string is).

This module does not compute the shared length (see :func:`analyzer.prefix.common_prefix`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from analyzer.detect import Volatile, find_volatile
from analyzer.lint.documents import walk_strings, get_path
from analyzer.segments import Segment

WINDOW = 96


@dataclass(frozen=True)
class Fork:
    segment: int
    field: str  # path of the differing string (or of the segment when no string differs)
    offset: int  # first differing character in that string
    volatile: Volatile | None  # offsets relative to the whole string
    text: str  # the later request's string
    before: str = ""  # the earlier request's string

    @property
    def similarity(self) -> float:
        """Share of the shorter string outside the differing middle (1.0: one small value changed)."""
        n = min(len(self.text), len(self.before))
        if n == 0:
            return 0.0
        same_tail = first_diff(self.text[self.offset :][::-1], self.before[self.offset :][::-1])
        return min(1.0, (self.offset + same_tail) / n)


def first_diff(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    step = 256
    while i + step <= n and a[i : i + step] == b[i : i + step]:
        i += step
    while i < n and a[i] == b[i]:
        i += 1
    return i


def volatile_at(text: str, index: int) -> Volatile | None:
    """The detected value covering (or starting right at) ``index`` of ``text``."""
    lo = max(0, index - WINDOW)
    window = text[lo : index + WINDOW]
    best = None
    for v in find_volatile(window):
        if v.start + lo <= index < v.end + lo or (index <= v.start + lo <= index + 2):
            best = Volatile(v.kind, v.start + lo, v.end + lo, v.value, v.severity)
            break
    return best


def explain_fork(body_a: Any, segs_a: Sequence[Segment], body_b: Any, segs_b: Sequence[Segment], shared: int) -> Fork | None:
    """Why ``body_b`` stops sharing ``body_a``'s prefix after ``shared`` segments (None: no fork)."""
    if shared >= len(segs_a) or shared >= len(segs_b):
        return None
    sa, sb = segs_a[shared], segs_b[shared]
    before = dict(walk_strings(get_path(body_a, sa.path), sa.path))
    for path, text in walk_strings(get_path(body_b, sb.path), sb.path):
        other = before.get(path)
        if other != text:
            idx = first_diff(other or "", text)
            return Fork(shared, path, idx, volatile_at(text, idx), text, other or "")
    return Fork(shared, sb.path, 0, None, "")
