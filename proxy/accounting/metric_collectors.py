"""Prometheus families read at each scrape: the ledger's counters, the upstream pool's state, the
replicas of pools and the fleet's totals (``prefixgate_ledger_*``, ``prefixgate_pool_*``,
``prefixgate_replica_*``, ``prefixgate_fleet_*``).

Each collector calls what it is given when scraped; :class:`proxy.accounting.metrics.Metrics`
registers them (``attach_ledger``, ``attach_pool``, ``attach_replicas``, ``attach_fleet``).

They keep nothing between scrapes and read Redis never: the fleet's is its last read, refreshed
by ``Metrics.refresh``. See docs/dashboard.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from proxy.accounting.counters import COUNTERS, INDEX
from proxy.accounting.fleet_redis import from_ints
from proxy.accounting.fleet_rows import Rows, capped


class LedgerCollector(Collector):
    """``prefixgate_ledger_*`` from ``ledger_stats()``: (failures, dropped) or (failures, dropped,
    flagged)."""

    def __init__(self, ledger_stats: Callable[[], tuple[int, ...]]) -> None:
        self.ledger_stats = ledger_stats

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


class PoolCollector(Collector):
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


class ReplicaCollector(Collector):
    """``prefixgate_replica_*{upstream, replica}`` from the pools' snapshot now (``snapshot`` →
    upstream → :meth:`proxy.replicas.replica_set.ReplicaSet.snapshot`); at most ``max_labels``
    (upstream, replica) pairs, the rest left out (they come from the config, which caps them too)."""

    COUNTERS = (
        ("requests", "Sends to the replica (a retry on another replica is a send of its own)."),
        ("prompt_tokens", "Prompt tokens the replica reported."),
        ("cached_tokens", "Prompt tokens the replica reported read from its cache."),
        ("errors", "Sends to the replica that failed or answered a failing status (5xx)."),
        ("retried_away", "Sends whose connection failed before any byte and went to another replica."),
        ("spilled", "Requests it took for a busier first choice (bounded load)."),
    )
    GAUGES = (
        ("in_flight", "Requests on the replica now (this proxy's)."),
        ("heads", "Apps' heads placed on the replica now."),
    )

    def __init__(self, snapshot: Callable[[], dict], max_labels: int) -> None:
        self.snapshot, self.max_labels = snapshot, max_labels

    def collect(self) -> Iterable[CounterMetricFamily | GaugeMetricFamily]:
        labels = ["upstream", "replica"]
        counters = {
            k: CounterMetricFamily(f"prefixgate_replica_{k}", h + " By replica.", labels=labels)
            for k, h in self.COUNTERS
        }
        gauges = {k: GaugeMetricFamily(f"prefixgate_replica_{k}", h, labels=labels) for k, h in self.GAUGES}
        up = GaugeMetricFamily("prefixgate_replica_up", "1 while the replica is in rotation.", labels=labels)
        pairs = [(name, r) for name, pool in sorted(self.snapshot().items()) for r in pool["replicas"]]
        for name, r in pairs[: self.max_labels]:
            pair = [name, r["url"]]
            for k, family in (*counters.items(), *gauges.items()):
                family.add_metric(pair, r.get(k, 0))
            up.add_metric(pair, 1 if r["health"]["state"] == "up" else 0)
        yield from counters.values()
        yield from gauges.values()
        yield up


class FleetCollector(Collector):
    """``prefixgate_fleet_*`` from the fleet's last read (``rows`` → sums per (provider, model), or
    None), its names capped again (:func:`~proxy.accounting.fleet_rows.capped`). A USD series has
    a sample only where something was priced (unpriced money is null, never $0)."""

    _PRICED = INDEX["priced"]

    def __init__(
        self, rows: Callable[[], Rows | None], available: Callable[[], bool], max_models: int
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
        rows = capped(rows, self.max_models)
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
                if c.kind == "usd" and not values[self._PRICED]:
                    continue
                if c.kind != "usd" and not values[i]:
                    continue
                family.add_metric([provider, model, m.kind] if m.kind else [provider, model], values[i])
        yield from families.values()
