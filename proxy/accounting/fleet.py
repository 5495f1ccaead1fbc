"""Fleet totals: every replica's counters summed in Redis, written in batches off the request path.

:class:`Fleet` is a recorder sink: :meth:`Fleet.handle` adds a record's contributions to
in-memory deltas (no I/O); a background task flushes them in numbered batches, one script call
per :data:`INTERVAL_S` at most, retried until Redis acknowledges them (applied once per batch
number). Its reads it inherits from :class:`~proxy.accounting.fleet_reads.FleetReads`.

This module does not serve HTTP, keeps no request data beyond the sums, and is built only for a
Redis store (:func:`open_fleet`). See docs/multi-replica.md.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from operator import add
from typing import Any

from proxy.accounting.counters import COUNTERS, INDEX, OTHER, Cap, contributions
from proxy.accounting.fleet_reads import DEADLINE_S, READ_CACHE_S, FleetReads
from proxy.accounting.fleet_redis import FleetRedis, Key, to_ints
from proxy.accounting.fleet_rows import capped, shape
from proxy.accounting.records import RequestRecord

log = logging.getLogger("prefixgate.fleet")

INTERVAL_S = 0.1
RETRY_S = 1.0
CLOSE_DEADLINE_S = 3.0
CLOSE_ATTEMPTS = 2
MAX_PENDING = 10_000
_REQUESTS = INDEX["requests"]


class Fleet(FleetReads):
    """The fleet's writes (and, inherited, its reads). ``pending``: deltas per (provider, model,
    hour) not yet in a batch; ``batch``: the (number, deltas) sent and not yet acknowledged;
    ``replica``: this process's id, under which its batch numbers count; ``flushed``: batches
    acknowledged; ``failures``, ``dropped`` and ``overflowed`` as :meth:`flush_state` shows them."""

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
        super().__init__(redis, deadline_s=deadline_s, read_cache_s=read_cache_s, max_models=max_models)
        self.interval_s = interval_s
        self.retry_s = retry_s
        self.max_pending = max_pending
        self.replica = uuid.uuid4().hex
        self._model = Cap(max_models)
        self.pending: dict[Key, list[int]] = {}
        self.batch: tuple[int, dict[Key, list[int]]] | None = None
        self._seq = 0
        self.flushed = self.failures = self.dropped = self.overflowed = 0
        self.last_error: str | None = None
        self._task: asyncio.Task | None = None
        self._closing = False
        self._closed = False

    # -- writing ---------------------------------------------------------------------------

    def handle(self, record: RequestRecord) -> None:
        """Add ``record`` to the pending deltas. After the final flush (a request uvicorn cancelled
        at shutdown) it is counted as dropped and logged instead: the ledger has it."""
        if self._closed:
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
        """Start the flush loop on the running loop (nothing when there is none yet, or once
        :meth:`aclose` began)."""
        if (self._task is not None and not self._task.done()) or self._closing:
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
        trip. True when nothing is left unacknowledged from before this call. A failure never
        reaches a request: it is counted, logged once, and the batch kept for the next try."""
        if self.batch is None:
            if not self.pending:
                return True
            self._seq += 1
            self.batch, self.pending = (self._seq, self.pending), {}
        seq, deltas = self.batch
        try:
            async with asyncio.timeout(self.deadline_s):
                failed = await self.redis.write(self.replica, seq, deltas)
        except Exception as exc:
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
        """Flush every ``interval_s``, every ``retry_s`` after a failure. An unexpected error
        (flush counts Redis' own) is logged and the loop goes on: one that ended would keep the
        counts forever."""
        while True:
            await asyncio.sleep(self.interval_s)
            try:
                ok = not (self.pending or self.batch) or await self.flush()
            except Exception:
                log.exception("fleet totals: flush loop error; going on")
                ok = False
            if not ok:
                await asyncio.sleep(max(0.0, self.retry_s - self.interval_s))

    async def aclose(self) -> None:
        """Stop the loop, then flush what is left (the unacknowledged batch, then the rest),
        giving up after :data:`CLOSE_ATTEMPTS` failures (a blip, not an outage) or
        :data:`CLOSE_DEADLINE_S`; then close the client. Records handled meanwhile still join
        the final flush; later ones are dropped (:meth:`handle`)."""
        self._closing = True
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
                while (self.pending or self.batch) and failed < CLOSE_ATTEMPTS:
                    if not await self.flush():
                        failed += 1
                        await asyncio.sleep(0.1)
        except TimeoutError:
            pass
        finally:
            self._closed = True
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

    async def view(self) -> dict[str, Any]:
        """The ``fleet`` object of ``/prefixgate/stats``: the same counters, ``providers`` and
        ``models`` as the replica's own, over every replica and all time."""
        rows = await self.rows()
        out: dict[str, Any] = {"available": self.error is None, "error": self.error, "as_of": self.as_of}
        if rows is not None:
            out.update(shape(capped(rows, self.max_models)))
        out["flush"] = self.flush_state()
        return out


def open_fleet(store_url: str) -> Fleet | None:
    """The fleet of the replicas on this store: None for the memory store (one replica is the fleet)."""
    if store_url == "memory":
        return None
    return Fleet(FleetRedis(store_url))
