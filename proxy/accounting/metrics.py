"""Prometheus metrics for ``GET /prefixgate/metrics``: a recorder sink with its own registry per app.

Exports the counters of :data:`proxy.accounting.counters.COUNTERS` that have a ``Metric``, the
duration histograms, miss reasons, rewrites, proxy errors, rules drift, the provider's own miss
reasons, the ledger's and the upstream pool's state (read at each scrape), each counter again
per configured upstream (``prefixgate_upstream_*``) and, with a Redis store, the fleet's totals
(``prefixgate_fleet_*``). Model, rewrite-id and upstream labels are capped, then ``other``.

This module does not serve HTTP (the app does) and keeps no request data.
See docs/dashboard.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from proxy.accounting.counters import (
    COUNTERS,
    INDEX,
    LABELS,
    MAX_REWRITE_IDS,
    OTHER,
    Cap,
    contributions,
)
from proxy.accounting.drift import MAX_DRIFT_ROWS, split
from proxy.accounting.fleet import capped
from proxy.accounting.fleet_redis import from_ints
from proxy.accounting.provider_miss import MAX_REASONS, agrees
from proxy.accounting.records import RequestRecord
from proxy.accounting.stats import MAX_UPSTREAMS

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)


class _LedgerCollector(Collector):
    def __init__(self, ledger_stats: Callable[[], tuple[int, ...]]) -> None:
        self.ledger_stats = ledger_stats  # (failures, dropped) or (failures, dropped, flagged)

    def collect(self) -> Iterable[CounterMetricFamily]:
        failures, dropped, *rest = self.ledger_stats()
        yield CounterMetricFamily(
            "prefixgate_ledger_failures",
            "Ledger write attempts that failed (rows retried or written one by one).",
            value=failures,
        )
        yield CounterMetricFamily(
            "prefixgate_ledger_dropped",
            "Ledger rows dropped (queue full, unwritable, or unwritten at exit).",
            value=dropped,
        )
        if rest:
            yield CounterMetricFamily(
                "prefixgate_ledger_flagged",
                "Ledger rows stored with a clamped or nulled value.",
                value=rest[0],
            )


class _PoolCollector(Collector):
    """``prefixgate_pool_*`` from the upstream pool's stats now (``stats`` → dict or None before start)."""

    GAUGES = (
        (
            "max_connections",
            "Upstream connections the pool may hold (--max-connections, or from the open-file limit).",
        ),
        ("in_use", "Upstream connections carrying an exchange now."),
        ("idle", "Open idle upstream connections kept for reuse now."),
        ("waiting", "Requests waiting for a free upstream connection now."),
    )
    COUNTERS = (
        ("waited", "waited_total", "Requests that had to wait for a free upstream connection."),
        ("exhausted", "exhausted_total", "Requests that gave up waiting for one (503 pool_exhausted)."),
    )

    def __init__(self, stats: Callable[[], dict | None]) -> None:
        self.stats = stats

    def collect(self) -> Iterable[CounterMetricFamily | GaugeMetricFamily]:
        now = self.stats()
        if now is None:
            return
        for key, help_text in self.GAUGES:
            if key in now:
                yield GaugeMetricFamily(f"prefixgate_pool_{key}", help_text, value=now[key])
        for name, key, help_text in self.COUNTERS:
            if key in now:
                yield CounterMetricFamily(f"prefixgate_pool_{name}", help_text, value=now[key])


class _FleetCollector(Collector):
    """``prefixgate_fleet_*`` from the fleet's last read: ``rows`` → {(provider, model): sums} or None."""

    _PRICED = INDEX["priced"]

    def __init__(
        self, rows: Callable[[], dict | None], available: Callable[[], bool], max_models: int
    ) -> None:
        self.rows, self.available, self.max_models = rows, available, max_models

    def collect(self) -> Iterable[CounterMetricFamily | GaugeMetricFamily]:
        yield GaugeMetricFamily(
            "prefixgate_fleet_available",
            "1 when the fleet totals' last read from Redis answered.",
            value=1 if self.available() else 0,
        )
        rows = self.rows()
        if rows is None:
            return
        rows = capped(rows, self.max_models)  # every replica's names since the fleet began: bounded here too
        families: dict[str, CounterMetricFamily | GaugeMetricFamily] = {}
        for i, c in enumerate(COUNTERS):
            m = c.metric
            if m is None:
                continue
            name = "prefixgate_fleet_" + m.name.removeprefix("prefixgate_")
            family = families.get(name)
            if family is None:
                kind = GaugeMetricFamily if m.gauge else CounterMetricFamily
                labels = ["provider", "model", "kind"] if m.kind else ["provider", "model"]
                family = families[name] = kind(
                    name, (m.help or c.help) + " Whole fleet, all time.", labels=labels
                )
            for (provider, model), raw in sorted(rows.items()):
                values = from_ints(raw)
                if c.kind == "usd" and not values[self._PRICED]:  # unpriced: no money, never $0
                    continue
                if c.kind != "usd" and not values[i]:
                    continue
                family.add_metric([provider, model, m.kind] if m.kind else [provider, model], values[i])
        yield from families.values()


class Metrics:
    content_type = CONTENT_TYPE_LATEST
    fleet = None  # a proxy.accounting.fleet.Fleet once attached

    def __init__(
        self,
        max_models: int = 200,
        max_rewrite_ids: int = MAX_REWRITE_IDS,
        max_upstreams: int = MAX_UPSTREAMS,
    ) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.max_models = max_models
        self._model = Cap(max_models)
        self._upstream = Cap(max_upstreams)
        self._rewrite_id = Cap(max_rewrite_ids)
        self._children: dict[
            tuple, object
        ] = {}  # (metric or counter index, labels) -> child: labels() locks and validates
        r = self.registry
        families: dict[str, Counter | Gauge] = {}
        self._exported: list[tuple[int, int, bool]] = []  # (index in COUNTERS, index in LABELS, is USD)
        self._family: dict[
            int, tuple[Counter | Gauge, str | None]
        ] = {}  # index in COUNTERS -> (family, kind label)
        by_upstream: dict[str, Counter | Gauge] = {}
        self._upstream_family: dict[int, Counter | Gauge] = {}  # index in COUNTERS -> its per-upstream family
        for i, c in enumerate(COUNTERS):
            m = c.metric
            if m is None:
                continue
            family = families.get(m.name)
            if family is None:
                kind = Gauge if m.gauge else Counter
                names = [*m.labels, "kind"] if m.kind else list(m.labels)
                family = families[m.name] = kind(m.name, m.help or c.help, names, registry=r)
            self._exported.append((i, LABELS.index(m.labels), c.kind == "usd"))
            self._family[i] = (family, m.kind)
            name = "prefixgate_upstream_" + m.name.removeprefix("prefixgate_")
            twin = by_upstream.get(name)
            if twin is None:
                kind = Gauge if m.gauge else Counter
                names = ["provider", "upstream", "kind"] if m.kind else ["provider", "upstream"]
                twin = by_upstream[name] = kind(name, (m.help or c.help) + " By upstream.", names, registry=r)
            self._upstream_family[i] = twin
        self.families = families
        self.upstream_families = by_upstream
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
        self._error_kind = Cap(32)  # the proxy's own error kinds: a short, fixed list
        self._drift_key = Cap(MAX_DRIFT_ROWS)  # (model, field, why) label sets, then other
        self._reason = Cap(MAX_REASONS)
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
        self.registry.register(_LedgerCollector(ledger_stats))

    def attach_pool(self, stats: Callable[[], dict | None]) -> None:
        """Export the upstream pool (:meth:`proxy.transport.upstream.UpstreamPool.pool_stats`) as ``prefixgate_pool_*``."""
        self.registry.register(_PoolCollector(stats))

    def attach_fleet(self, fleet) -> None:
        """Export ``fleet``'s totals (:class:`proxy.accounting.fleet.Fleet`) as ``prefixgate_fleet_*``."""
        self.fleet = fleet
        self.registry.register(
            _FleetCollector(lambda: fleet.last_rows, lambda: fleet.available, self.max_models)
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
            if priced if usd else v:  # money moves with every priced request (an unpriced one is not $0)
                key = (i, label_sets[labels])
                child = children.get(key)
                if child is None:
                    child = self._new_child(*key)
                twin_key = (-1 - i, upstream)
                twin = children.get(twin_key)
                if twin is None:
                    _, kind = self._family[i]
                    family = self._upstream_family[i]
                    twin = children[twin_key] = (
                        family.labels(*upstream, kind) if kind else family.labels(*upstream)
                    )
                if v:
                    child.inc(v)
                    twin.inc(v)
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
        if r.drift:
            model = by_model[1]
            for note in dict.fromkeys(r.drift):
                key = self._drift_key("\x1f".join((r.provider, model, note)))
                labels = (
                    (r.provider, OTHER, OTHER, OTHER) if key == OTHER else (r.provider, model, *split(note))
                )
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
