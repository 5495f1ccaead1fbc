"""``bench route``'s arithmetic: each run's share of the ideal and the issue's aims."""

from __future__ import annotations

from proxy.bench.route_report import add_ideal, aims


def test_ideal_and_aims_arithmetic():
    runs = {
        "round-robin": {
            "cached_tokens": 100,
            "ttft_p50_s": 0.2,
            "max_over_mean_load": 1.0,
            "app_cacheable_tokens": {0: 50, 1: 0},
            "app_requests": {0: 3, 1: 3},
        },
        "prefix": {
            "cached_tokens": 400,
            "ttft_p50_s": 0.05,
            "max_over_mean_load": 1.2,
            "app_cacheable_tokens": {0: 100, 1: 100},
            "app_requests": {0: 3, 1: 3},
        },
    }
    add_ideal(runs)
    assert runs["prefix"]["ideal_cached_tokens"] == 400 and runs["prefix"]["of_ideal"] == 1.0
    assert runs["round-robin"]["of_ideal"] == 0.25
    assert aims(runs) == {
        "prefix_over_round_robin_cached": 4.0,
        "prefix_over_round_robin_ttft_p50": 0.25,
        "prefix_max_over_mean_load": 1.2,
        "met": True,
    }
    assert aims({"prefix": runs["prefix"]}) == {}
