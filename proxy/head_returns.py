"""How each tenant's head comes back over time, for the ``ttl-1h`` and ``ttl-12h`` rewrites.

:class:`HeadReturnsTracker` keeps, per head key (:func:`analyzer.rewrite.head_key`: tenant +
masked tools and system) and pair of windows (the provider's short and long TTL), when the
head was last seen, how many times it came new or after more than the long window (a cache
write either way) and how many times it came back after more than the short window but
within the long one (a short-TTL cache would have expired, a long-TTL one not). The windows:
:data:`ANTHROPIC_WINDOWS` (5 minutes, 1 hour; the default) and :data:`OPENAI_56_WINDOWS`
(GPT-5.6+ Responses: 30 minutes, 12 hours); one head followed under both is two entries.
:meth:`observe` records one request and returns the counts so far as an
:class:`analyzer.rewrite.HeadReturns`; :func:`analyzer.rewrite.ttl.pays_for_1h` and
:func:`~analyzer.rewrite.ttl.pays_for_12h` do the price arithmetic. Bounded LRU (least
recently seen heads go first); one per proxy process, so with several replicas each learns
from its own traffic.

This module never sees prompt text, only keys.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

from analyzer.rewrite import HeadReturns

FIVE_MINUTES, ONE_HOUR = 300.0, 3600.0
THIRTY_MINUTES, TWELVE_HOURS = 1800.0, 12 * 3600.0
ANTHROPIC_WINDOWS = (FIVE_MINUTES, ONE_HOUR)
OPENAI_56_WINDOWS = (THIRTY_MINUTES, TWELVE_HOURS)


class HeadReturnsTracker:
    def __init__(self, max_entries: int = 100_000, clock=time.monotonic) -> None:
        if max_entries <= 0:
            raise ValueError("max_entries must be positive")
        self.max_entries = max_entries
        self._clock = clock
        self._heads: OrderedDict[tuple[float, float, str], list[float]] = OrderedDict()  # (windows, key) → [last seen, writes, slow returns]
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._heads)

    def observe(self, key: str, windows: tuple[float, float] = ANTHROPIC_WINDOWS) -> HeadReturns:
        """Record one request of head ``key``; ``windows``: (short TTL, long TTL) in seconds."""
        short, long = windows
        if not 0 < short < long:
            raise ValueError(f"windows must be (short, long) with 0 < short < long, got {windows!r}")
        with self._lock:  # the rewrite of a big body runs in a worker thread
            return self._observe((short, long, key))

    def _observe(self, key: tuple[float, float, str]) -> HeadReturns:
        short, long, _ = key
        now = self._clock()
        entry = self._heads.get(key)
        if entry is None:
            entry = self._heads[key] = [now, 1, 0]
        else:
            gap = now - entry[0]
            if gap > long:
                entry[1] += 1
            elif gap > short:
                entry[2] += 1
            entry[0] = now
            self._heads.move_to_end(key)
        while len(self._heads) > self.max_entries:
            self._heads.popitem(last=False)
        return HeadReturns(writes=int(entry[1]), slow_returns=int(entry[2]))
