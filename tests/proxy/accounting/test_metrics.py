from __future__ import annotations

import pytest

from analyzer.usage import Usage
from proxy.accounting.metrics import Metrics
from proxy.accounting.records import RequestRecord
from tests.support.prometheus import samples


def test_counts_tokens_money_and_histograms():
    m = Metrics()
    m.handle(
        RequestRecord(
            "a",
            0,
            "t",
            "anthropic",
            "/v1/messages",
            model="claude-sonnet-4-5",
            status=200,
            latency_s=0.2,
            ttfb_s=0.05,
            analysed=True,
            usage=Usage(10060, 0, 10000, 0, 5),
            prefix_segments=0,
            cost_usd=0.0376,
            saved_usd=-0.0075,
            missed_usd=0.0,
            miss_reason="no-cache-breakpoint",
        )
    )
    m.handle(
        RequestRecord(
            "b",
            0,
            "t",
            "anthropic",
            "/v1/messages",
            model="claude-sonnet-4-5",
            status=200,
            latency_s=0.1,
            ttfb_s=0.02,
            analysed=True,
            usage=Usage(10060, 10000, 0, 0, 5),
            prefix_segments=2,
            cost_usd=0.003255,
            saved_usd=0.027,
            missed_usd=0.0,
        )
    )
    m.handle(
        RequestRecord(
            "c",
            0,
            "t",
            "openai",
            "/v1/chat/completions",
            model="secret-model",
            status=200,
            analysed=False,
            usage=Usage(5, 0, 0, 0, 1),
        )
    )
    m.handle(
        RequestRecord(
            "d",
            0,
            "t",
            "openai",
            "/v1/chat/completions",
            status=502,
            analysed=True,
            error="upstream_unreachable",
        )
    )
    s = samples(m)
    model = ("model", "claude-sonnet-4-5")
    assert s[("prefixgate_requests_total", (model, ("provider", "anthropic"), ("status", "2xx")))] == 2
    assert s[("prefixgate_requests_total", (("model", ""), ("provider", "openai"), ("status", "5xx")))] == 1
    assert (
        s[("prefixgate_tokens_total", (("kind", "cache_write"), model, ("provider", "anthropic")))] == 10000
    )
    assert s[("prefixgate_tokens_total", (("kind", "cache_read"), model, ("provider", "anthropic")))] == 10000
    assert s[("prefixgate_tokens_total", (("kind", "input"), model, ("provider", "anthropic")))] == 120
    assert abs(s[("prefixgate_cost_usd_total", (model, ("provider", "anthropic")))] - 0.040855) < 1e-12
    assert abs(s[("prefixgate_saved_usd", (model, ("provider", "anthropic")))] - 0.0195) < 1e-12
    assert s[("prefixgate_unpriced_total", (("model", "secret-model"), ("provider", "openai")))] == 1
    assert s[("prefixgate_unanalysed_total", (("provider", "openai"),))] == 1
    assert s[("prefixgate_prefix_hits_total", (("provider", "anthropic"),))] == 1
    assert s[("prefixgate_miss_reasons_total", (("reason", "no-cache-breakpoint"),))] == 1
    assert s[("prefixgate_request_duration_seconds_count", (("provider", "anthropic"),))] == 2
    assert s[("prefixgate_time_to_first_byte_seconds_count", (("provider", "anthropic"),))] == 2


def test_registries_are_per_instance_and_models_capped():
    a, b = Metrics(max_models=2), Metrics()
    for i in range(5):
        a.handle(RequestRecord(str(i), 0, "t", "openai", "/v1/x", model=f"m{i}", status=200))
    assert (
        "prefixgate_requests_total",
        (("model", "other"), ("provider", "openai"), ("status", "2xx")),
    ) in samples(a)
    assert not any(k[0] == "prefixgate_requests_total" for k in samples(b))


def test_ledger_counters():
    m = Metrics()
    m.attach_ledger(lambda: (3, 1))
    s = samples(m)
    assert s[("prefixgate_ledger_failures_total", ())] == 3
    assert s[("prefixgate_ledger_dropped_total", ())] == 1


def test_unknown_prefix_is_counted_apart_from_hits():
    m = Metrics()
    m.handle(
        RequestRecord(
            "a",
            0,
            "t",
            "openai",
            "/v1/chat/completions",
            status=200,
            analysed=True,
            prefix_segments=None,
            prefix_bytes=None,
        )
    )
    m.handle(
        RequestRecord(
            "b", 0, "t", "openai", "/v1/chat/completions", status=200, analysed=True, prefix_segments=1
        )
    )
    s = samples(m)
    assert s[("prefixgate_prefix_unknown_total", (("provider", "openai"),))] == 1
    assert s[("prefixgate_prefix_hits_total", (("provider", "openai"),))] == 1


def test_rewrites_by_provider_and_id():
    m = Metrics()
    m.handle(
        RequestRecord(
            "a",
            0,
            "t",
            "anthropic",
            "/v1/messages",
            status=200,
            rewrites=["add-breakpoints", "cap-breakpoints"],
        )
    )
    m.handle(
        RequestRecord("b", 0, "t", "anthropic", "/v1/messages", status=200, rewrites=["add-breakpoints"])
    )
    m.handle(
        RequestRecord(
            "c", 0, "t", "openai", "/v1/chat/completions", status=200, rewrites=["prompt-cache-key"]
        )
    )
    m.handle(RequestRecord("d", 0, "t", "openai", "/v1/chat/completions", status=200))
    s = samples(m)
    assert s[("prefixgate_rewrites_total", (("provider", "anthropic"), ("rewrite", "add-breakpoints")))] == 2
    assert s[("prefixgate_rewrites_total", (("provider", "anthropic"), ("rewrite", "cap-breakpoints")))] == 1
    assert s[("prefixgate_rewrites_total", (("provider", "openai"), ("rewrite", "prompt-cache-key")))] == 1
    assert s[("prefixgate_rewritten_total", (("provider", "anthropic"),))] == 2
    assert s[("prefixgate_rewritten_total", (("provider", "openai"),))] == 1


def test_rewrite_labels_are_capped():
    m = Metrics(max_rewrite_ids=2)
    for i in range(5):
        m.handle(RequestRecord(str(i), 0, "t", "openai", "/v1/x", status=200, rewrites=[f"r{i}"]))
    labels = {dict(k[1])["rewrite"]: v for k, v in samples(m).items() if k[0] == "prefixgate_rewrites_total"}
    assert labels == {"r0": 1, "r1": 1, "other": 3}


def test_every_exported_counter_equals_stats():
    # One table behind both: each series summed over its labels is the counter /prefixgate/stats shows.
    from proxy.accounting.counters import COUNTERS
    from proxy.accounting.stats import Stats
    from tests.support.request_records import variety

    m, stats = Metrics(), Stats()
    for r in variety():
        m.handle(r)
        stats.handle(r)
    want, s = stats.to_json(), samples(m)
    for c in COUNTERS:
        if c.metric is None or not c.shown:
            continue
        series = [
            v
            for (name, labels), v in s.items()
            if name.startswith(c.metric.name)
            and not name.endswith("_created")
            and (c.metric.kind is None or ("kind", c.metric.kind) in labels)
        ]
        assert sum(series) == pytest.approx(want[c.name], abs=1e-12), c.name
    tokens_in = sum(
        v
        for (name, labels), v in s.items()
        if name == "prefixgate_tokens_total" and ("kind", "input") in labels
    )
    assert tokens_in == sum(r.usage.uncached_input_tokens for r in variety() if r.usage)
