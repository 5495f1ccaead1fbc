"""Prometheus metrics for ``GET /prefixgate/metrics``: a recorder sink with its own registry.

Each app gets its own :class:`prometheus_client.CollectorRegistry` (never the global one),
so two proxies in one process — as in tests — never share counters. Metrics:

- ``prefixgate_requests_total{provider,model,status}`` (status class: 2xx, 4xx, 5xx, …)
- ``prefixgate_tokens_total{provider,model,kind}`` kind = input (paid at the input rate),
  cache_read, cache_write, output
- ``prefixgate_cost_usd_total``, ``prefixgate_missed_usd_total`` (counters) and
  ``prefixgate_saved_usd`` (a gauge: savings go negative when writes cost more than reads
  saved) by provider and model
- ``prefixgate_request_duration_seconds`` and ``prefixgate_time_to_first_byte_seconds``
  histograms by provider
- ``prefixgate_prefix_hits_total``, ``prefixgate_prefix_unknown_total`` (store skipped or
  failed), ``prefixgate_unanalysed_total``,
  ``prefixgate_unpriced_total``, ``prefixgate_miss_reasons_total{reason}``
- ``prefixgate_ledger_failures_total`` / ``prefixgate_ledger_dropped_total`` (and
  ``prefixgate_ledger_flagged_total``: rows stored with a clamped or nulled value) when a
  ledger is attached.

Model labels are capped (``max_models``, then ``other``) so a client cannot blow up the
series count. This module does not serve HTTP (the app does) and keeps no request data.
"""

from __future__ import annotations

from typing import Callable, Iterable

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

from proxy.accounting.records import RequestRecord

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)


class _LedgerCollector(Collector):
    def __init__(self, ledger_stats: Callable[[], tuple[int, ...]]) -> None:
        self.ledger_stats = ledger_stats  # (failures, dropped) or (failures, dropped, flagged)

    def collect(self) -> Iterable[CounterMetricFamily]:
        failures, dropped, *rest = self.ledger_stats()
        yield CounterMetricFamily("prefixgate_ledger_failures", "Ledger write attempts that failed (rows retried or written one by one).", value=failures)
        yield CounterMetricFamily("prefixgate_ledger_dropped", "Ledger rows dropped (queue full, unwritable, or unwritten at exit).", value=dropped)
        if rest:
            yield CounterMetricFamily("prefixgate_ledger_flagged", "Ledger rows stored with a clamped or nulled value.", value=rest[0])


class Metrics:
    content_type = CONTENT_TYPE_LATEST

    def __init__(self, max_models: int = 200) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.max_models = max_models
        self._models: set[str] = set()
        self._children: dict[tuple, object] = {}  # (metric, labels) -> child: labels() locks and validates
        r = self.registry
        self.requests = Counter("prefixgate_requests", "Requests finished.", ["provider", "model", "status"], registry=r)
        self.tokens = Counter("prefixgate_tokens", "Tokens by kind as the provider reported them.", ["provider", "model", "kind"], registry=r)
        self.cost = Counter("prefixgate_cost_usd", "What requests cost, USD.", ["provider", "model"], registry=r)
        self.saved = Gauge("prefixgate_saved_usd", "Saved by caching vs the same tokens uncached, USD (can go down).", ["provider", "model"], registry=r)
        self.missed = Counter("prefixgate_missed_usd", "Savings missed on prefixes repeated but not cached, USD.", ["provider", "model"], registry=r)
        self.latency = Histogram("prefixgate_request_duration_seconds", "Arrival to last byte.", ["provider"], buckets=LATENCY_BUCKETS, registry=r)
        self.ttfb = Histogram("prefixgate_time_to_first_byte_seconds", "Arrival to first byte relayed.", ["provider"], buckets=LATENCY_BUCKETS, registry=r)
        self.prefix_hits = Counter("prefixgate_prefix_hits", "Requests whose prefix was seen before.", ["provider"], registry=r)
        self.prefix_unknown = Counter("prefixgate_prefix_unknown", "Requests whose prefix is unknown: the store was skipped or failed.", ["provider"], registry=r)
        self.unanalysed = Counter("prefixgate_unanalysed", "Requests whose body could not be parsed.", ["provider"], registry=r)
        self.unpriced = Counter("prefixgate_unpriced", "Requests with usage but no price for the model.", ["provider", "model"], registry=r)
        self.miss_reasons = Counter("prefixgate_miss_reasons", "Cache misses by diagnosed reason.", ["reason"], registry=r)

    def attach_ledger(self, ledger_stats: Callable[[], tuple[int, ...]]) -> None:
        self.registry.register(_LedgerCollector(ledger_stats))

    def _model(self, model: str | None) -> str:
        name = model or ""
        if name in self._models:
            return name
        if len(self._models) < self.max_models:
            self._models.add(name)
            return name
        return "other"

    def _at(self, metric, *labels: str):
        key = (id(metric), labels)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*labels)
        return child

    def handle(self, r: RequestRecord) -> None:
        at = self._at
        model = self._model(r.model)
        status = f"{r.status // 100}xx" if r.status else "none"
        at(self.requests, r.provider, model, status).inc()
        at(self.latency, r.provider).observe(max(0.0, r.latency_s))
        if r.ttfb_s is not None:
            at(self.ttfb, r.provider).observe(max(0.0, r.ttfb_s))
        if r.prefix_segments is None:
            at(self.prefix_unknown, r.provider).inc()
        elif r.prefix_segments > 0:
            at(self.prefix_hits, r.provider).inc()
        if not r.analysed:
            at(self.unanalysed, r.provider).inc()
        if r.miss_reason:
            at(self.miss_reasons, r.miss_reason.split(";", 1)[0].strip()).inc()
        u = r.usage
        if u is None:
            return
        for kind, n in (("input", u.uncached_input_tokens), ("cache_read", u.cached_tokens),
                        ("cache_write", u.cache_write_tokens), ("output", u.output_tokens)):
            if n:
                at(self.tokens, r.provider, model, kind).inc(n)
        if r.cost_usd is None:
            at(self.unpriced, r.provider, model).inc()
            return
        at(self.cost, r.provider, model).inc(r.cost_usd)
        at(self.saved, r.provider, model).inc(r.saved_usd or 0.0)
        if r.missed_usd:
            at(self.missed, r.provider, model).inc(r.missed_usd)

    async def aclose(self) -> None:
        return None

    def render(self) -> bytes:
        return generate_latest(self.registry)
