"""In-flight counts shared between proxy replicas, best effort, never awaited by a pick.

Each proxy publishes its own in-flight count per replica to a :class:`LoadBoard` and reads the
others' in a background loop (every ``interval_s``, each call bounded by ``timeout_s``); a pick
reads only the last snapshot (:meth:`SharedLoad.others`), so a hung or dead board never delays
a request, and a snapshot older than ``stale_s`` counts as nothing. :class:`MemoryLoadBoard`
serves proxies in one process (tests); the Redis one is :mod:`.redis_board`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from typing import Protocol

from proxy.replicas.periodic import Periodic

log = logging.getLogger("prefixgate.replicas")


class LoadBoard(Protocol):
    async def publish(self, proxy_id: str, counts: Mapping[str, int], ttl_s: float) -> None:
        """This proxy's in-flight count per replica URL, kept ``ttl_s`` seconds."""

    async def read(self) -> dict[str, dict[str, int]]:
        """Every live proxy's counts: proxy id → replica URL → in flight."""


class MemoryLoadBoard:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._rows: dict[str, tuple[float, dict[str, int]]] = {}

    async def publish(self, proxy_id: str, counts: Mapping[str, int], ttl_s: float) -> None:
        self._rows[proxy_id] = (self._clock() + ttl_s, dict(counts))

    async def read(self) -> dict[str, dict[str, int]]:
        now = self._clock()
        return {p: dict(c) for p, (until, c) in self._rows.items() if until > now}


class SharedLoad(Periodic):
    def __init__(
        self,
        board: LoadBoard,
        proxy_id: str,
        local: Callable[[], Mapping[str, int]],
        *,
        interval_s: float = 0.25,
        timeout_s: float = 0.1,
        stale_s: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if min(interval_s, timeout_s, stale_s) <= 0:
            raise ValueError("interval_s, timeout_s and stale_s must be positive")
        self.board, self.proxy_id, self._local = board, proxy_id, local
        self.interval_s, self.timeout_s, self.stale_s = interval_s, timeout_s, stale_s
        self._clock = clock
        self._others: dict[str, int] = {}
        self._read_at: float | None = None
        self.failures = 0  # refreshes that failed or missed their deadline

    def others(self) -> dict[str, int]:
        """The other proxies' in-flight per replica at the last refresh; {} when stale. No I/O."""
        if self._read_at is None or self._clock() - self._read_at > self.stale_s:
            return {}
        return self._others

    async def refresh(self) -> bool:
        """Publish ours, read theirs, each bounded by ``timeout_s``; True when both answered."""
        try:
            async with asyncio.timeout(self.timeout_s):
                await self.board.publish(self.proxy_id, self._local(), self.stale_s)
            async with asyncio.timeout(self.timeout_s):
                rows = await self.board.read()
        except Exception as exc:  # TimeoutError included: advice only, the next refresh tries again
            self.failures += 1
            log.debug("shared load refresh failed: %s", type(exc).__name__)
            return False
        total: dict[str, int] = {}
        for proxy, counts in rows.items():
            if proxy != self.proxy_id:
                for url, n in counts.items():
                    total[url] = total.get(url, 0) + max(0, int(n))
        self._others, self._read_at = total, self._clock()
        return True

    async def tick(self) -> bool:
        return await self.refresh()

    def period_s(self) -> float:
        return self.interval_s
