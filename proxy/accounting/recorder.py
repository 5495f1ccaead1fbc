"""Fans each finished request's :class:`~proxy.accounting.records.RequestRecord` out to sinks.

Enrichers run first, in order (``enrich(record, ctx)``: the money layer fills cost,
savings and the miss reason); then every sink gets the record (``handle(record)``: stats,
ledger, metrics). Both are called on the event loop and must not block: a sink that does
I/O queues the record and batches. An enricher or sink that raises is logged and skipped,
so one broken sink never loses the others' accounting. ``aclose()`` closes every sink.

This module does not build records (the relay does) and keeps none itself.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Protocol

from analyzer.prefix import Chain
from analyzer.segments import Segment
from proxy.accounting.records import RequestRecord

log = logging.getLogger("prefixgate.recorder")


@dataclass(slots=True)
class RecordContext:
    """What enrichers may look at besides the record (never the API key)."""

    body: Any = None  # the parsed request body, or None when unanalysed
    segments: list[Segment] = field(default_factory=list)
    chain: Chain | None = None


class Sink(Protocol):
    def handle(self, record: RequestRecord) -> None: ...

    async def aclose(self) -> None: ...


class Enricher(Protocol):
    def enrich(self, record: RequestRecord, ctx: RecordContext) -> None: ...


class Recorder:
    def __init__(self, sinks: list[Sink] | None = None, enrichers: list[Enricher] | None = None) -> None:
        self.sinks: list[Sink] = list(sinks or [])
        self.enrichers: list[Enricher] = list(enrichers or [])

    def add_sink(self, sink: Sink) -> None:
        self.sinks.append(sink)

    def add_enricher(self, enricher: Enricher) -> None:
        self.enrichers.append(enricher)

    def record(self, record: RequestRecord, ctx: RecordContext | None = None) -> None:
        ctx = ctx or RecordContext()
        for enricher in self.enrichers:
            try:
                enricher.enrich(record, ctx)
            except Exception:
                log.exception("enricher %s failed on request %s", type(enricher).__name__, record.request_id)
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
