"""The prefix store's look-up of one request, in flight beside its upstream call: :class:`Lookup`.

The handler starts it (:meth:`Lookup.start`) as its last step before the relay: the memory store
answers at once, a remote one runs as a task (:data:`LOOKUP_TASK`) under its guard's deadline, and
nothing sent upstream depends on it. The relay awaits :meth:`Lookup.result` right before a
response head and calls :meth:`Lookup.close` on every way out, before the record goes. Until an
answer the prefix is unknown (``None``, headers ``unknown``), never 0; a store is advice: its
failure is logged, never a request's. It never holds the exchange. See docs/store.md.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from proxy.accounting.records import (
    STORE_CANCELLED,
    STORE_OK,
    STORE_SKIPPED,
    STORE_UNAVAILABLE,
    RequestRecord,
)

if TYPE_CHECKING:
    from analyzer.prefix import Chain
    from proxy.store.base import PrefixStore

log = logging.getLogger("prefixgate.handler")

#: the prefix headers' value when the store was skipped, failed or never answered
UNKNOWN = "unknown"
#: the name of every look-up task (tests look for leftovers by it)
LOOKUP_TASK = "prefixgate-lookup"
SEGMENTS, BYTES = "x-prefixgate-prefix-segments", "x-prefixgate-prefix-bytes"


class Lookup:
    """One request's prefix look-up-and-record (one store round trip), in flight beside the
    upstream exchange. Holds the record, the headers and the chain, never the exchange."""

    __slots__ = ("chain", "headers", "record", "task")

    def __init__(self, record: RequestRecord, headers: dict[str, str], chain: Chain) -> None:
        self.record, self.headers, self.chain = record, headers, chain
        self.task: asyncio.Task[int | None] | None = None

    def start(self, store: PrefixStore) -> None:
        """Asks the store, or skips it (``store`` ``skipped``, nothing awaited) while it is not
        ``ready``: the tenant's Redis (node) breaker is open, or the store is held. A store that
        never ``waits`` answers here, without a task; the prefix is unknown until an answer."""
        record = self.record
        record.prefix_segments = record.prefix_bytes = None
        self.headers[SEGMENTS] = self.headers[BYTES] = UNKNOWN
        if not store.ready(record.tenant):
            record.store = STORE_SKIPPED
            return
        record.store = STORE_UNAVAILABLE
        if not store.waits:
            try:
                self._answer(store.seen_sync(record.tenant, record.provider, self.chain.hashes))
            except Exception as exc:
                log.warning("prefix store failed on request %s: %s", record.request_id, type(exc).__name__)
            return
        task = self.task = asyncio.get_running_loop().create_task(
            store.seen(record.tenant, record.provider, self.chain.hashes), name=LOOKUP_TASK
        )
        task.add_done_callback(_retrieve)

    async def result(self) -> None:
        """Waits for the answer (bounded by the store's own deadline) and writes it; cancelled
        with the caller."""
        task = self.task
        if task is None:
            return
        try:
            seen = await task
        except Exception as exc:
            log.warning("prefix store failed on request %s: %s", self.record.request_id, type(exc).__name__)
            seen = None
        self.task = None
        self._answer(seen)

    def close(self) -> None:
        """Ends it without waiting: writes the answer if it came, else cancels the task (here,
        or it was with the request awaiting it): ``store`` ``cancelled``, not the store's failure
        (the request ended first), and the prefix stays unknown. Idempotent."""
        task, self.task = self.task, None
        if task is None:
            return
        if not task.done() or task.cancelled():
            task.cancel()
            self.record.store = STORE_CANCELLED
        elif task.exception() is None:
            self._answer(task.result())

    def _answer(self, seen: int | None) -> None:
        """Writes an answer; None (failed or past its deadline) leaves the prefix unknown."""
        if seen is None:
            return
        record = self.record
        record.store = STORE_OK
        record.prefix_segments, record.prefix_bytes = seen, self.chain.bytes_at(seen)
        self.headers[SEGMENTS], self.headers[BYTES] = str(seen), str(record.prefix_bytes)


def _retrieve(task: asyncio.Task) -> None:
    """A look-up nobody awaited (closed after it failed) never logs "exception was never retrieved"."""
    if not task.cancelled():
        task.exception()
