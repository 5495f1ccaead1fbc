"""Fleet totals: every replica's counters summed in Redis, written in batches off the request path.

:class:`Fleet` is a recorder sink: :meth:`Fleet.handle` adds a record's contributions to
in-memory deltas (no I/O); a background task flushes them in numbered batches, one script call
per :data:`INTERVAL_S` at most, retried until Redis acknowledges them (applied once per batch
number). Reads (:meth:`view`, :meth:`hours`, :meth:`rows`) are cached, bounded, and answer
``available: false`` with the last values read when Redis does not answer, never an exception.

This module does not serve HTTP, keeps no request data beyond the sums, and is built only for a
Redis store. See docs/multi-replica.md.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable
from operator import add
from typing import Any

from proxy.accounting.counters import COUNTERS, INDEX, OTHER, Cap, contributions, finish
from proxy.accounting.fleet_redis import (
    READ_CHUNK,
    RETENTION_S,
    FleetRedis,
    Key,
    from_ints,
    to_ints,
)
from proxy.accounting.records import RequestRecord

log = logging.getLogger("prefixgate.fleet")

INTERVAL_S = 0.1
DEADLINE_S = 1.0
RETRY_S = 1.0
CLOSE_DEADLINE_S = 3.0
READ_CACHE_S = 1.0
HOURS_DEADLINE_S = (
    10.0  # a 30-day range, read in chunks of READ_CHUNK hours (each within DEADLINE_S): off the request path
)
MAX_RANGES = 8  # hour ranges cached at once (the dashboard offers 5)
MAX_PENDING = 10_000
_REQUESTS, _BILLABLE = INDEX["requests"], INDEX["billable"]
Rows = dict[tuple[str, str], list[int]]


class _Cached:
    """One value read at most once per ``ttl_s``, shared by concurrent readers; on failure the
    error and the last good value."""

    def __init__(self, read: Callable[[], Any], ttl_s: float, deadline_s: float) -> None:
        self.read, self.ttl_s, self.deadline_s = read, ttl_s, deadline_s
        self.value: Any = None
        self.as_of: float | None = None  # wall time of the last good read
        self.error: str | None = None
        self._at = -1e18  # monotonic time of the last attempt
        self._task: asyncio.Task | None = None

    async def get(self) -> None:
        if time.monotonic() - self._at < self.ttl_s:
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
        except Exception as exc:  # noqa: BLE001 (Redis down or slow: said in the answer, never raised)
            self.error = type(exc).__name__
        finally:
            self._at = time.monotonic()
            self._task = None


class Fleet:
    def __init__(
        self,
        redis: FleetRedis,
        *,
        interval_s: float = INTERVAL_S,
        deadline_s: float = DEADLINE_S,
        retry_s: float = RETRY_S,
        read_cache_s: float = READ_CACHE_S,
        max_pending: int = MAX_PENDING,
        max_models: int = 1000,
    ) -> None:
        if interval_s <= 0 or deadline_s <= 0 or max_pending < 1:
            raise ValueError("interval_s and deadline_s must be positive, max_pending at least 1")
        self.redis = redis
        self.interval_s, self.deadline_s, self.retry_s, self.max_pending = (
            interval_s,
            deadline_s,
            retry_s,
            max_pending,
        )
        self.replica = uuid.uuid4().hex  # batch numbers are per replica process
        self._model = Cap(max_models)
        self.max_models = max_models
        self.pending: dict[Key, list[int]] = {}  # not yet in a batch
        self.batch: tuple[int, dict[Key, list[int]]] | None = (
            None  # (number, deltas) sent, not yet acknowledged
        )
        self._seq = 0
        self.flushed = self.failures = self.dropped = self.overflowed = 0  # flushed: batches acknowledged
        self.last_error: str | None = None
        self._task: asyncio.Task | None = None
        self._closed = False  # aclose began: no loop any more (records still join its final flush)
        self._done = False  # aclose ended: a record now is counted as dropped
        self._totals = _Cached(lambda: self.redis.read_all(), read_cache_s, deadline_s)
        self._read_cache_s = read_cache_s
        self._hours: dict[int, _Cached] = {}  # range length in hours → its cached read

    # -- writing ---------------------------------------------------------------------------

    def handle(self, record: RequestRecord) -> None:
        if self._done:  # after the final flush (a request uvicorn cancelled at shutdown): said, not kept
            self.dropped += 1
            log.warning(
                "fleet totals: request %s finished after the final flush; not in the fleet's totals "
                "(the ledger has it)",
                record.request_id,
            )
            return
        if self._task is None or self._task.done():
            self.start()
        key = (record.provider, self._model(record.model or ""), int(record.ts // 3600))
        row = self.pending.get(key)
        if row is None:
            if len(self.pending) >= self.max_pending:
                key = (key[0], OTHER, key[2])
                row = self.pending.get(key)
            if row is None:
                if len(self.pending) >= self.max_pending:
                    self.dropped += 1
                    return
                row = self.pending[key] = [0] * len(COUNTERS)
        self.pending[key] = list(map(add, row, to_ints(contributions(record))))

    def start(self) -> None:
        """Start the flush loop on the running loop (nothing when there is none yet)."""
        if (self._task is not None and not self._task.done()) or self._closed:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._task = loop.create_task(self._loop(), name="prefixgate-fleet-flush")

    @property
    def pending_requests(self) -> int:
        """Requests finished here and not yet acknowledged by Redis."""
        rows = [*self.pending.values(), *(self.batch[1].values() if self.batch else ())]
        return sum(r[_REQUESTS] for r in rows)

    async def flush(self) -> bool:
        """Send the unacknowledged batch, or else the pending deltas as a new one: one round
        trip. True when nothing is left unacknowledged from before this call."""
        if self.batch is None:
            if not self.pending:
                return True
            self._seq += 1
            self.batch, self.pending = (self._seq, self.pending), {}
        seq, deltas = self.batch
        try:
            async with asyncio.timeout(self.deadline_s):
                failed = await self.redis.write(self.replica, seq, deltas)
        except Exception as exc:  # noqa: BLE001 (a flush failure never reaches a request: counted, batch kept)
            self.failures += 1
            if self.last_error is None:
                log.warning(
                    "fleet totals: flush failed (%s); keeping the counts, retrying every %.0f s",
                    type(exc).__name__,
                    self.retry_s,
                )
            self.last_error = type(exc).__name__
            return False
        if self.last_error is not None:
            log.info("fleet totals: flushing again")
        self.batch, self.last_error = None, None
        self.flushed += 1
        if failed > 0:
            self.overflowed += failed
            log.warning("fleet totals: %d field increments overflowed and were skipped", failed)
        return True

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.interval_s)
            try:
                ok = not (self.pending or self.batch) or await self.flush()
            except (
                Exception
            ):  # not expected (flush counts Redis' errors); a loop that ended would keep counts forever
                log.exception("fleet totals: flush loop error; going on")
                ok = False
            if not ok:
                await asyncio.sleep(max(0.0, self.retry_s - self.interval_s))

    async def aclose(self) -> None:
        """Stop the loop, then flush what is left (the unacknowledged batch, then the rest),
        giving up after a second failure or :data:`CLOSE_DEADLINE_S`; then close the client."""
        self._closed = True
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
        failed = 0
        try:
            async with asyncio.timeout(CLOSE_DEADLINE_S):
                while (self.pending or self.batch) and failed < 2:  # one retry: a blip, not an outage
                    if not await self.flush():
                        failed += 1
                        await asyncio.sleep(0.1)
        except TimeoutError:
            pass
        finally:
            self._done = True
            left = self.pending_requests
            if left:
                log.warning(
                    "fleet totals: %d requests not flushed at shutdown (%s); the ledger has them",
                    left,
                    self.last_error or "timeout",
                )
            await self.redis.aclose()

    # -- reading ---------------------------------------------------------------------------

    def flush_state(self) -> dict[str, Any]:
        return {
            "replica": self.replica[:12],
            "pending_requests": self.pending_requests,
            "batches_flushed": self.flushed,
            "failures": self.failures,
            "last_error": self.last_error,
            "dropped": self.dropped,
            "overflowed": self.overflowed,
        }

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

    async def view(self) -> dict[str, Any]:
        """The ``fleet`` object of ``/prefixgate/stats``: the same counters, ``providers`` and
        ``models`` as the replica's own, over every replica and all time."""
        rows = await self.rows()
        out: dict[str, Any] = {"available": self.error is None, "error": self.error, "as_of": self.as_of}
        if rows is not None:
            out.update(shape(capped(rows, self.max_models)))
        out["flush"] = self.flush_state()
        return out

    async def hours(
        self, since: float | None = None
    ) -> tuple[dict[int, Rows] | None, str | None, float | None]:
        """(sums per hour and (provider, model), error, as_of) over the hours from the one holding
        ``since`` (None: the oldest kept) to now: only those hours are read, in chunks, so a 24 h
        view of a month of history reads 26 hashes, not 769 (one big read blocked Redis for every
        replica and outgrew the deadline). Cached per range length, like the totals."""
        now = int(time.time() // 3600)
        oldest = now - RETENTION_S // 3600 + 1
        span = now - (oldest if since is None else min(now, max(oldest, int(since // 3600))))
        cached = self._hours.get(span)
        if cached is None:
            if len(self._hours) >= MAX_RANGES:
                self._hours.pop(next(iter(self._hours)))
            cached = self._hours[span] = _Cached(
                lambda: self._read_hours(span), self._read_cache_s, max(self.deadline_s, HOURS_DEADLINE_S)
            )
        await cached.get()
        return cached.value, cached.error, cached.as_of

    async def _read_hours(self, span: int) -> dict[int, Rows]:
        now = int(time.time() // 3600)
        hours = range(now - span, now + 2)  # +1: a replica's clock ahead
        out: dict[int, Rows] = {}
        for i in range(0, len(hours), READ_CHUNK):  # each chunk its own deadline: a hung Redis costs one
            async with asyncio.timeout(self.deadline_s):
                out.update(await self.redis.read_hours(hours[i : i + READ_CHUNK]))
        return out


def total(rows: Rows) -> list[int]:
    acc = [0] * len(COUNTERS)
    for row in rows.values():
        acc = list(map(add, acc, row))
    return acc


def capped(rows: Rows, limit: int) -> Rows:
    """At most ``limit`` (provider, model) rows, most requests first; the rest summed into
    (provider, ``other``) per provider. Each replica caps its own names, but Redis holds every
    replica's, every process's since the fleet began: what a label or a JSON list can be stays bounded."""
    if len(rows) <= limit:
        return rows
    ordered = sorted(rows.items(), key=lambda kv: (-kv[1][_REQUESTS], kv[0]))
    out: Rows = dict(ordered[:limit])
    for (provider, _), row in ordered[limit:]:
        key = (provider, OTHER)
        out[key] = list(map(add, out.get(key, [0] * len(row)), row))
    return out


def shape(rows: Rows) -> dict[str, Any]:
    """Sums per (provider, model) → the shown counters, ``providers`` and the billable ``models``
    (most requests first), as :meth:`proxy.accounting.stats.Stats.to_json` shapes them."""
    out: dict[str, Any] = finish(from_ints(total(rows)))
    providers: dict[str, Rows] = {}
    for (provider, model), row in rows.items():
        providers.setdefault(provider, {})[(provider, model)] = row
    out["providers"] = {p: finish(from_ints(total(r))) for p, r in sorted(providers.items())}
    ordered = sorted(rows.items(), key=lambda kv: (-kv[1][_REQUESTS], kv[0]))
    out["models"] = [
        {"provider": p, "model": m or None, **finish(from_ints(r))} for (p, m), r in ordered if r[_BILLABLE]
    ]
    return out


def open_fleet(store_url: str) -> Fleet | None:
    """The fleet of the replicas on this store: None for the memory store (one replica is the fleet)."""
    if store_url == "memory":
        return None
    return Fleet(FleetRedis(store_url))
