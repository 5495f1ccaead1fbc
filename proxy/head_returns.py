"""How each tenant's head comes back over time, for the ``ttl-1h`` and ``ttl-12h`` rewrites.

:class:`HeadReturnsTracker` keeps, per head key (:func:`analyzer.rewrite.head_key`) and pair of
windows (:data:`ANTHROPIC_WINDOWS` 5 min / 1 h, :data:`OPENAI_56_WINDOWS` 30 min / 12 h), when
the head was last seen, how often it came new or after the long window (a write) and how often
back between the two windows; :meth:`observe` returns an :class:`analyzer.rewrite.HeadReturns`
for the price arithmetic in :mod:`analyzer.rewrite.ttl`. Bounded LRU, one per process (each
replica learns from its own traffic). It never sees prompt text, only keys.
See docs/rewrite.md (a longer TTL where it pays).
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
        # (windows, key) → [last seen, writes, slow returns]
        self._heads: OrderedDict[tuple[float, float, str], list[float]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._heads)

    def observe(self, key: str, windows: tuple[float, float] = ANTHROPIC_WINDOWS) -> HeadReturns:
        """Record one request of head ``key``; ``windows``: (short TTL, long TTL) in seconds.
        Thread-safe: the rewrite of a big body runs in a worker thread."""
        short, long = windows
        if not 0 < short < long:
            raise ValueError(f"windows must be (short, long) with 0 < short < long, got {windows!r}")
        with self._lock:
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
