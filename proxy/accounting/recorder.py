"""Fans each finished request out: enrichers first, then sinks.

:meth:`Recorder.record` takes the request's :class:`~proxy.exchange.Exchange` once it is done: each
enricher in order (``enrich(exchange)``: the money layer), then every sink gets the record alone
(``handle(record)``: stats, ledger, metrics, access log, fleet totals). :meth:`Recorder.emit` takes
a record with no client exchange (the Gemini auto-cache's own calls): sinks only. All run on the
event loop and must not block; one that raises is logged and skipped. ``aclose()`` closes the sinks.

It builds no records and keeps none; enrichers must not keep the exchange (it holds the parsed
request body). See docs/dashboard.md (how a record travels).
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
