"""What analyze compares a request with: the log's last bodies, in bounded memory.

:class:`RecentBodies` keeps the last few requests' bodies and segments; against those the prefix
tree names, :meth:`~RecentBodies.reusable` finds the prefix a request could have reused (but for
volatile values) and :meth:`~RecentBodies.closest_fork` why it left the prefix it shared.

It holds no whole log, no tree and counts nothing (:mod:`analyzer.logs.analysis` does).
See docs/analyze.md.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from analyzer.divergence import TextFork, text_fork
from analyzer.logs.tree import Match
from analyzer.missed import Reuse, longest, reusable
from analyzer.segments import Segment


class RecentBodies:
    """The last ``size`` requests' (body, segments, time), by request index."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._by_index: OrderedDict[int, tuple[Any, Sequence[Segment], float | None]] = OrderedDict()

    def remember(self, idx: int, body: Any, segments: Sequence[Segment], ts: float | None) -> None:
        self._by_index[idx] = (body, segments, ts)
        if len(self._by_index) > self.size:
            self._by_index.popitem(last=False)

    def reusable(
        self, segments: Sequence[Segment], ts: float | None, seen: Match, ttl: float
    ) -> Reuse | None:
        """:func:`analyzer.missed.reusable` against the earlier requests the tree names (the
        last one through the shared prefix), when this one forks from them within the TTL."""
        if not seen.branched or seen.shared >= len(segments):
            return None
        best = None
        for prev_idx in seen.previous:
            prev = self._by_index.get(prev_idx)
            if prev is None:
                continue
            if ts is not None and prev[2] is not None and ts - prev[2] > ttl:
                continue
            best = longest(best, reusable(segments, prev[1], seen.shared))
        return best

    def closest_fork(self, body: Any, segments: Sequence[Segment], seen: Match) -> TextFork | None:
        """Why this request left the prefix it shared, read against the most similar of the
        earlier requests the tree names (None: none of them is remembered, or none forks)."""
        best = None
        for prev_idx in seen.previous:
            prev = self._by_index.get(prev_idx)
            if prev is None:
                continue
            fork = text_fork(prev[0], prev[1], body, segments, seen.shared)
            if fork is not None and (best is None or fork.similarity > best.similarity):
                best = fork
        return best
