"""Prometheus metrics for ``GET /prefixgate/metrics``: a recorder sink with its own registry per app.

Exports the counters of :data:`proxy.accounting.counters.COUNTERS` that have a ``Metric`` (each
again per configured upstream, ``prefixgate_upstream_*``), the duration histograms, miss reasons,
rewrites, proxy errors, rules drift and the provider's own miss reasons; the families read at each
scrape (ledger, upstream pool, fleet totals) live in :mod:`.metric_collectors`. Model, rewrite-id,
upstream and reason labels are capped, then ``other``.

This module does not serve HTTP (the app does) and keeps no request data. See docs/dashboard.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

from proxy.accounting.counters import COUNTERS, LABELS, MAX_REWRITE_IDS, OTHER, Cap, contributions
from proxy.accounting.drift import MAX_DRIFT_ROWS, split
from proxy.accounting.metric_collectors import (
    FleetCollector,
    LedgerCollector,
    PoolCollector,
    ReplicaCollector,
)
from proxy.accounting.provider_miss import MAX_REASONS, agrees
from proxy.accounting.records import RequestRecord
from proxy.accounting.stats import MAX_UPSTREAMS

if TYPE_CHECKING:
    from proxy.accounting.fleet import Fleet

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
MAX_ERROR_KINDS = 32


class Metrics:
    """Per exported counter, ``_exported`` holds (index in COUNTERS, index in LABELS, is USD),
    ``_family`` its (family, ``kind`` label) and ``_upstream_family`` its per-upstream twin;
    ``_children`` caches each labelled child by (metric or counter index, labels), since
    ``labels()`` locks and validates on every call. A USD counter moves with every priced request
    (an unpriced one is not $0), the others by what the record adds."""

    content_type = CONTENT_TYPE_LATEST
    fleet: Fleet | None = None

    def __init__(
        self,
        max_models: int = 200,
        max_rewrite_ids: int = MAX_REWRITE_IDS,
        max_upstreams: int = MAX_UPSTREAMS,
    ) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.max_models, self.max_upstreams = max_models, max_upstreams
        self._model = Cap(max_models)
        self._upstream = Cap(max_upstreams)
        self._rewrite_id = Cap(max_rewrite_ids)
        self._error_kind = Cap(MAX_ERROR_KINDS)
        self._drift_key = Cap(MAX_DRIFT_ROWS)
        self._reason = Cap(MAX_REASONS)
        self._children: dict[tuple, object] = {}
        self._exported: list[tuple[int, int, bool]] = []
        self._family: dict[int, tuple[Counter | Gauge, str | None]] = {}
        self._upstream_family: dict[int, Counter | Gauge] = {}
        self._counter_families()
        self._request_families()

    def _counter_families(self) -> None:
        """One family per metric of the table (counters may share one, by ``kind``), and its
        ``prefixgate_upstream_*`` twin."""
        families: dict[str, Counter | Gauge] = {}
        by_upstream: dict[str, Counter | Gauge] = {}
        for i, c in enumerate(COUNTERS):
            m = c.metric
            if m is None:
                continue
            kind = Gauge if m.gauge else Counter
            family = families.get(m.name)
            if family is None:
                names = [*m.labels, "kind"] if m.kind else list(m.labels)
                family = families[m.name] = kind(m.name, m.help or c.help, names, registry=self.registry)
            self._exported.append((i, LABELS.index(m.labels), c.kind == "usd"))
            self._family[i] = (family, m.kind)
            name = "prefixgate_upstream_" + m.name.removeprefix("prefixgate_")
            twin = by_upstream.get(name)
            if twin is None:
                names = ["provider", "upstream", "kind"] if m.kind else ["provider", "upstream"]
                help_text = (m.help or c.help) + " By upstream."
                twin = by_upstream[name] = kind(name, help_text, names, registry=self.registry)
            self._upstream_family[i] = twin

    def _request_families(self) -> None:
        r = self.registry
        self.latency = Histogram(
            "prefixgate_request_duration_seconds",
            "Arrival to last byte.",
            ["provider"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.ttfb = Histogram(
            "prefixgate_time_to_first_byte_seconds",
            "Arrival to first byte relayed.",
            ["provider"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.miss_reasons = Counter(
            "prefixgate_miss_reasons", "Cache misses by diagnosed reason.", ["reason"], registry=r
        )
        self.rewrites = Counter(
            "prefixgate_rewrites", "Requests per rewrite id applied.", ["provider", "rewrite"], registry=r
        )
        self.errors = Counter(
            "prefixgate_proxy_errors",
            "Requests ended by a proxy-side error, by kind (pool_exhausted, "
            "upstream_timeout, upstream_unreachable, client_disconnected, ...).",
            ["provider", "kind"],
            registry=r,
        )
        self.rules_drift = Counter(
            "prefixgate_rules_drift",
            "Usage fields or values the model's rules do not expect (each such "
            "request priced null): update the price row (--prices) or the rules.",
            ["provider", "model", "field", "why"],
            registry=r,
        )
        self.provider_miss = Counter(
            "prefixgate_provider_miss",
            "Requests per cache-miss reason the provider answered "
            "(Anthropic diagnostics.cache_miss_reason type).",
            ["provider", "reason"],
            registry=r,
        )
        self.provider_missed_tokens = Counter(
            "prefixgate_provider_missed_tokens",
            "Input tokens the provider says its cache missed (cache_missed_input_tokens), per reason.",
            ["provider", "reason"],
            registry=r,
        )
        self.provider_missed_usd = Counter(
            "prefixgate_provider_missed_usd",
            "Those tokens priced at input - cached read, USD (priced requests only).",
            ["provider", "reason"],
            registry=r,
        )
        self.provider_miss_agreed = Counter(
            "prefixgate_provider_miss_agreed",
            "Provider miss reasons that prefixgate's own "
            "diagnosis agrees with (proxy.accounting.provider_miss).",
            ["provider", "reason"],
            registry=r,
        )

    def attach_ledger(self, ledger_stats: Callable[[], tuple[int, ...]]) -> None:
        self.registry.register(LedgerCollector(ledger_stats))

    def attach_pool(self, stats: Callable[[], dict | None]) -> None:
        """Export the upstream pool (:meth:`proxy.transport.upstream.UpstreamPool.pool_stats`) as ``prefixgate_pool_*``."""
        self.registry.register(PoolCollector(stats))

    def attach_replicas(self, snapshot: Callable[[], dict]) -> None:
        """Export the pools' replicas (:meth:`proxy.replicas.upstream_pools.Pools.snapshot`) as
        ``prefixgate_replica_*``, their labels capped like the upstreams'."""
        self.registry.register(ReplicaCollector(snapshot, self.max_upstreams))

    def attach_fleet(self, fleet: Fleet) -> None:
        """Export ``fleet``'s totals as ``prefixgate_fleet_*``."""
        self.fleet = fleet
        self.registry.register(
            FleetCollector(lambda: fleet.last_rows, lambda: fleet.available, self.max_models)
        )

    async def refresh(self) -> None:
        """Read what :meth:`render` exports from elsewhere (the fleet totals; cached 1 s)."""
        if self.fleet is not None:
            await self.fleet.rows()

    def _at(self, metric, labels: tuple[str, ...]):
        key = (id(metric), labels)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*labels)
        return child

    def _new_child(self, i: int, labels: tuple[str, ...]):
        family, kind = self._family[i]
        child = self._children[(i, labels)] = family.labels(*labels, kind) if kind else family.labels(*labels)
        return child

    def _new_twin(self, i: int, upstream: tuple[str, str]):
        _, kind = self._family[i]
        family = self._upstream_family[i]
        twin = self._children[(-1 - i, upstream)] = (
            family.labels(*upstream, kind) if kind else family.labels(*upstream)
        )
        return twin

    def handle(self, r: RequestRecord) -> None:
        children = self._children
        provider = (r.provider,)
        by_model = (r.provider, self._model(r.model or ""))
        label_sets = (provider, by_model, (*by_model, f"{r.status // 100}xx" if r.status else "none"))
        d = contributions(r)
        priced = r.cost_usd is not None
        upstream = (r.provider, self._upstream(r.upstream or r.provider))
        for i, labels, usd in self._exported:
            v = d[i]
            if priced if usd else v:
                key = (i, label_sets[labels])
                child = children.get(key)
                if child is None:
                    child = self._new_child(*key)
                twin = children.get((-1 - i, upstream))
                if twin is None:
                    twin = self._new_twin(i, upstream)
                if v:
                    child.inc(v)
                    twin.inc(v)
        self._count_request(r, provider, by_model[1])

    def _count_request(self, r: RequestRecord, provider: tuple[str], model: str) -> None:
        """The families that are not counters of the table: timings, errors, reasons, rewrites."""
        at = self._at
        at(self.latency, provider).observe(max(0.0, r.latency_s))
        if r.ttfb_s is not None:
            at(self.ttfb, provider).observe(max(0.0, r.ttfb_s))
        if r.error:
            at(self.errors, (r.provider, self._error_kind(r.error))).inc()
        if r.miss_reason:
            at(self.miss_reasons, (r.miss_reason.split(";", 1)[0].strip(),)).inc()
        for rewrite in r.rewrites:
            at(self.rewrites, (r.provider, self._rewrite_id(rewrite))).inc()
        for note in dict.fromkeys(r.drift):
            key = self._drift_key("\x1f".join((r.provider, model, note)))
            labels = (r.provider, OTHER, OTHER, OTHER) if key == OTHER else (r.provider, model, *split(note))
            at(self.rules_drift, labels).inc()
        if r.provider_miss_reason:
            labels = (r.provider, self._reason(r.provider_miss_reason))
            at(self.provider_miss, labels).inc()
            if r.provider_missed_tokens:
                at(self.provider_missed_tokens, labels).inc(r.provider_missed_tokens)
            if r.provider_missed_usd is not None:
                at(self.provider_missed_usd, labels).inc(max(0.0, r.provider_missed_usd))
            if agrees(r.provider_miss_reason, r.miss_reason):
                at(self.provider_miss_agreed, labels).inc()

    async def aclose(self) -> None:
        return None

    def render(self) -> bytes:
        return generate_latest(self.registry)
