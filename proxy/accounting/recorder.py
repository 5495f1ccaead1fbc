"""Fans each finished request out: enrichers first, then sinks.

:meth:`Recorder.record` takes the request's :class:`~proxy.exchange.Exchange` once it is
done. Enrichers run first, in order (``enrich(exchange)``: the money layer reads the
record and the early miss diagnosis and fills cost, savings and the miss reason); then
every sink gets the record alone (``handle(record)``: stats, ledger, metrics, access
log, fleet totals). Both are called on the event loop and must not block: a sink that does
I/O queues the record and batches. An enricher or sink that raises is logged and skipped, so
one broken sink never loses the others' accounting. ``aclose()`` closes every sink.

:meth:`Recorder.emit` takes a record that has no client exchange: the proxy's own upstream
calls (the Gemini auto-cache's ``cachedContents`` create and refresh,
:mod:`proxy.gemini_cache.manager`). It goes to the sinks only: the enrichers read an
exchange, and such a record carries its money itself (``cache_storage_usd``).

This module does not build records (the handler, the relay and the auto-cache manager do) and keeps none itself;
enrichers must not keep the exchange either (it holds the parsed request body).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol

from proxy.accounting.records import RequestRecord

if TYPE_CHECKING:
    from proxy.exchange import Exchange

log = logging.getLogger("prefixgate.recorder")


class Sink(Protocol):
    def handle(self, record: RequestRecord) -> None: ...

    async def aclose(self) -> None: ...


class Enricher(Protocol):
    def enrich(self, exchange: Exchange) -> None: ...


class Recorder:
    def __init__(self, sinks: list[Sink] | None = None, enrichers: list[Enricher] | None = None) -> None:
        self.sinks: list[Sink] = list(sinks or [])
        self.enrichers: list[Enricher] = list(enrichers or [])

    def add_sink(self, sink: Sink) -> None:
        self.sinks.append(sink)

    def record(self, exchange: Exchange) -> None:
        record = exchange.record
        for enricher in self.enrichers:
            try:
                enricher.enrich(exchange)
            except Exception:
                log.exception("enricher %s failed on request %s", type(enricher).__name__, record.request_id)
        self.emit(record)

    def emit(self, record: RequestRecord) -> None:
        """Hands ``record`` to every sink (no enricher): for records with no client exchange."""
        for sink in self.sinks:
            try:
                sink.handle(record)
            except Exception:
                log.exception("sink %s failed on request %s", type(sink).__name__, record.request_id)

    async def aclose(self) -> None:
        for sink in self.sinks:
            try:
                await sink.aclose()
            except Exception:
                log.exception("closing sink %s failed", type(sink).__name__)
