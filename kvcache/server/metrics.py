"""The local server's ``/metrics`` in Prometheus text format (prometheus-client, a registry per engine).

Gauges read at scrape time: running and waiting sequences, KV blocks used and free. Counters: prefix
cache queries and hits (prompt tokens looked up, and found cached, at each request's first admission),
preemptions, engine steps. Histograms observed by the engine loop as tokens are delivered: time to
first token (from arrival, queueing included) and inter-token latency (between a stream's consecutive
tokens). It does not serve HTTP itself (``app``).
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily

from kvcache.engine.engine import Engine
from kvcache.engine.sequence import Sequence

PREFIX = "kvcache_"
TTFT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
ITL_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56)


class _Counters:
    """Counters whose values live in the engine (read at scrape time, never double-counted)."""

    def __init__(self, engine: Engine):
        self.engine = engine

    def collect(self):
        allocator, scheduler, loop = self.engine.allocator, self.engine.scheduler, self.engine.loop
        for name, doc, value in (
            (
                "prefix_cache_queries",
                "Prompt tokens looked up in the prefix cache.",
                allocator.queried_tokens,
            ),
            (
                "prefix_cache_hits",
                "Prompt tokens found in the prefix cache (KV reused, not computed).",
                allocator.hit_tokens,
            ),
            (
                "preemptions",
                "Sequences preempted for lack of KV blocks (recomputed later).",
                scheduler.preemptions,
            ),
            ("engine_steps", "Forward passes the engine loop ran.", loop.steps),
        ):
            yield CounterMetricFamily(PREFIX + name, doc, value=value)


class EngineMetrics:
    def __init__(self, engine: Engine):
        self.registry = CollectorRegistry()
        scheduler, manager = engine.scheduler, engine.pool.manager
        total = len(manager.blocks)
        gauges = (
            ("num_requests_running", "Sequences in the running batch.", lambda: len(scheduler.running)),
            (
                "num_requests_waiting",
                "Sequences waiting for admission (new or preempted).",
                lambda: len(scheduler.waiting),
            ),
            ("kv_blocks_used", "KV blocks held by sequences.", lambda: total - manager.num_free),
            (
                "kv_blocks_free",
                "KV blocks free (cached prefixes among them stay reusable).",
                lambda: manager.num_free,
            ),
        )
        for name, doc, read in gauges:
            Gauge(PREFIX + name, doc, registry=self.registry).set_function(read)
        self.registry.register(_Counters(engine))
        self.ttft = Histogram(
            PREFIX + "time_to_first_token_seconds",
            "Arrival to first token.",
            buckets=TTFT_BUCKETS,
            registry=self.registry,
        )
        self.itl = Histogram(
            PREFIX + "inter_token_latency_seconds",
            "Between a stream's consecutive tokens.",
            buckets=ITL_BUCKETS,
            registry=self.registry,
        )
        engine.loop.observers.append(self.observe)

    def observe(self, seq: Sequence, now: float, gap: float | None) -> None:
        if gap is None:
            self.ttft.observe(now - seq.arrival)
        else:
            self.itl.observe(gap)

    def render(self) -> bytes:
        return generate_latest(self.registry)
