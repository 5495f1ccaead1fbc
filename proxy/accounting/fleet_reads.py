"""The fleet's totals as read from Redis, all time or per hour over a range, cached and bounded.

:class:`CachedRead` reads a value at most once per ``ttl_s`` within a deadline, one read shared
by concurrent callers; :class:`FleetReads` keeps the all-time read and one per range length
(:data:`MAX_RANGES`). A Redis that does not answer leaves the last values read, with the error's
type, never an exception.

It never writes (:mod:`.fleet` does) and shapes nothing (:mod:`.fleet_rows`). See docs/multi-replica.md.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any

from proxy.accounting.fleet_redis import READ_CHUNK, RETENTION_S, FleetRedis
from proxy.accounting.fleet_rows import Rows

DEADLINE_S = 1.0
READ_CACHE_S = 1.0
HOURS_DEADLINE_S = 10.0
MAX_RANGES = 8
CLOCK_AHEAD_HOURS = 1


class CachedRead:
    """One value read at most once per ``ttl_s``, shared by concurrent readers. ``value`` and
    ``as_of`` (wall time) are the last good read's; ``error`` the last attempt's error type (None:
    it answered). A failed read is said there, never raised."""

    def __init__(self, read: Callable[[], Awaitable[Any]], ttl_s: float, deadline_s: float) -> None:
        self.read, self.ttl_s, self.deadline_s = read, ttl_s, deadline_s
        self.value: Any = None
        self.as_of: float | None = None
        self.error: str | None = None
        self._last_try = -math.inf
        self._task: asyncio.Task | None = None

    async def get(self) -> None:
        if time.monotonic() - self._last_try < self.ttl_s:
            return
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._refresh())
        task = self._task
        await asyncio.shield(task)

    async def _refresh(self) -> None:
        try:
            async with asyncio.timeout(self.deadline_s):
                self.value = await self.read()
            self.as_of, self.error = time.time(), None
        except Exception as exc:
            self.error = type(exc).__name__
        finally:
            self._last_try = time.monotonic()
            self._task = None


class FleetReads:
    """The all-time sums (:meth:`rows`) and the hourly ones over a range (:meth:`hours`), one
    cached read per range length, at most :data:`MAX_RANGES` of them (the dashboard offers 5)."""

    def __init__(
        self,
        redis: FleetRedis,
        *,
        deadline_s: float = DEADLINE_S,
        read_cache_s: float = READ_CACHE_S,
        max_models: int = 1000,
    ) -> None:
        self.redis, self.deadline_s, self.max_models = redis, deadline_s, max_models
        self._read_cache_s = read_cache_s
        self._totals = CachedRead(lambda: self.redis.read_all(), read_cache_s, deadline_s)
        self._hours: dict[int, CachedRead] = {}

    @property
    def last_rows(self) -> Rows | None:
        """The all-time sums as last read, without reading (None: never read)."""
        return self._totals.value

    @property
    def available(self) -> bool:
        return self._totals.error is None

    @property
    def error(self) -> str | None:
        """The last all-time read's error type (None: it answered)."""
        return self._totals.error

    @property
    def as_of(self) -> float | None:
        """Unix time of the last all-time read that answered."""
        return self._totals.as_of

    async def rows(self) -> Rows | None:
        """All-time sums per (provider, model), as last read (None: never read)."""
        await self._totals.get()
        return self._totals.value

    async def hours(
        self, since: float | None = None
    ) -> tuple[dict[int, Rows] | None, str | None, float | None]:
        """(sums per hour and (provider, model), error, as_of) over the hours from the one holding
        ``since`` (None: the oldest kept) to now: only those hours are read, in chunks, so a 24 h
        view of a month of history reads 26 hashes, not 769 (one big read blocked Redis for every
        replica and outgrew the deadline). Cached per range length, like the totals; a 30-day
        range may take :data:`HOURS_DEADLINE_S` in all (it is off the request path)."""
        now = int(time.time() // 3600)
        oldest = now - RETENTION_S // 3600 + 1
        span = now - (oldest if since is None else min(now, max(oldest, int(since // 3600))))
        cached = self._hours.get(span)
        if cached is None:
            if len(self._hours) >= MAX_RANGES:
                self._hours.pop(next(iter(self._hours)))
            cached = self._hours[span] = CachedRead(
                lambda: self._read_hours(span), self._read_cache_s, max(self.deadline_s, HOURS_DEADLINE_S)
            )
        await cached.get()
        return cached.value, cached.error, cached.as_of

    async def _read_hours(self, span: int) -> dict[int, Rows]:
        """The range's hours, and :data:`CLOCK_AHEAD_HOURS` more (a replica's clock may run ahead);
        each chunk of :data:`READ_CHUNK` hours within its own deadline: a hung Redis costs one."""
        now = int(time.time() // 3600)
        hours = range(now - span, now + 1 + CLOCK_AHEAD_HOURS)
        out: dict[int, Rows] = {}
        for i in range(0, len(hours), READ_CHUNK):
            async with asyncio.timeout(self.deadline_s):
                out.update(await self.redis.read_hours(hours[i : i + READ_CHUNK]))
        return out
