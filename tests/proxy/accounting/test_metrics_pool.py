"""proxy.accounting.metrics: the upstream pool's gauges and the proxy's errors by kind."""

from __future__ import annotations

from proxy.accounting.metrics import Metrics
from proxy.accounting.records import RequestRecord


def _record(**over) -> RequestRecord:
    r = RequestRecord(request_id="r", ts=0.0, tenant="t", provider="openai", route="/v1/chat/completions")
    for k, v in over.items():
        setattr(r, k, v)
    return r


def test_pool_gauges_follow_the_stats_at_each_scrape():
    m = Metrics()
    now = {
        "max_connections": 9936,
        "in_use": 3,
        "idle": 2,
        "waiting": 1,
        "waited_total": 5,
        "exhausted_total": 4,
    }
    m.attach_pool(lambda: now)
    text = m.render().decode()
    for line in (
        "prefixgate_pool_max_connections 9936.0",
        "prefixgate_pool_in_use 3.0",
        "prefixgate_pool_idle 2.0",
        "prefixgate_pool_waiting 1.0",
        "prefixgate_pool_waited_total 5.0",
        "prefixgate_pool_exhausted_total 4.0",
    ):
        assert line in text
    now.update(in_use=0)
    assert "prefixgate_pool_in_use 0.0" in m.render().decode()


def test_no_pool_before_start_exports_nothing():
    m = Metrics()
    m.attach_pool(lambda: None)
    assert "prefixgate_pool_" not in m.render().decode()


def test_proxy_errors_are_counted_by_kind():
    m = Metrics()
    for error in ("pool_exhausted", "pool_exhausted", "upstream_timeout", None):
        m.handle(_record(status=503 if error else 200, error=error))
    text = m.render().decode()
    assert 'prefixgate_proxy_errors_total{kind="pool_exhausted",provider="openai"} 2.0' in text
    assert 'prefixgate_proxy_errors_total{kind="upstream_timeout",provider="openai"} 1.0' in text
