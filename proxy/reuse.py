"""How each tenant's head comes back over time, for the ``ttl-1h`` rewrite.

:class:`ReuseTracker` keeps, per head key (:func:`analyzer.rewrite.head_key`: tenant +
masked tools and system), when the head was last seen, how many times it came new or
after more than an hour (a cache write either way) and how many times it came back after
more than 5 minutes but within the hour (a 5-minute cache would have expired, a 1-hour one
not). :meth:`observe` records one request and returns the counts so far as an
:class:`analyzer.rewrite.Reuse`; :func:`analyzer.rewrite.ttl.pays_for_1h` does the price
arithmetic. Bounded LRU (least recently seen heads go first); one per proxy process, so
with several replicas each learns from its own traffic.

This module never sees prompt text, only keys.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

from analyzer.rewrite import Reuse

FIVE_MINUTES, ONE_HOUR = 300.0, 3600.0


class ReuseTracker:
    def __init__(self, max_entries: int = 100_000, clock=time.monotonic) -> None:
        if max_entries <= 0:
            raise ValueError("max_entries must be positive")
        self.max_entries = max_entries
        self._clock = clock
        self._heads: OrderedDict[str, list[float]] = OrderedDict()  # key → [last seen, writes, slow returns]
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._heads)

    def observe(self, key: str) -> Reuse:
        with self._lock:  # the rewrite of a big body runs in a worker thread
            return self._observe(key)

    def _observe(self, key: str) -> Reuse:
        now = self._clock()
        entry = self._heads.get(key)
        if entry is None:
            entry = self._heads[key] = [now, 1, 0]
        else:
            gap = now - entry[0]
            if gap > ONE_HOUR:
                entry[1] += 1
            elif gap > FIVE_MINUTES:
                entry[2] += 1
            entry[0] = now
            self._heads.move_to_end(key)
        while len(self._heads) > self.max_entries:
            self._heads.popitem(last=False)
        return Reuse(writes=int(entry[1]), slow_returns=int(entry[2]))
