"""``bench route``: prefix routing over fake engines with small caches beats round robin, a dead
replica costs no client error, and the summary's arithmetic."""

from __future__ import annotations

import asyncio

from click.testing import CliRunner

from proxy.bench.route import add_ideal, aims, bench_route_command, run_bench
from proxy.bench.route_replica import MODEL, FakeEngine, create_app
from proxy.bench.route_run import run_policy
from proxy.bench.route_workload import RouteWorkload
from tests.support.servers import free_port, serve

SMALL = RouteWorkload(apps=6, requests_per_app=8, system_tokens=1500, concurrency=4)


def test_prefix_routing_reads_more_from_cache_than_round_robin_on_fake_engines():
    result = run_bench(SMALL, 3, "fake", [], ["round-robin", "prefix"], 2, 1.0, 1)
    rr, px = result["runs"]["round-robin"], result["runs"]["prefix"]
    assert rr["errors"] == px["errors"] == 0
    assert px["cached_tokens"] > 1.5 * rr["cached_tokens"]
    assert px["of_ideal"] > rr["of_ideal"]
    assert sum(r["requests"] for r in px["pool"]["replicas"]) == SMALL.requests
    assert set(result["aims"]) == {
        "prefix_over_round_robin_cached",
        "prefix_over_round_robin_ttft_p50",
        "prefix_max_over_mean_load",
        "met",
    }


def test_a_dead_replica_costs_no_client_error():
    engines = [FakeEngine(20_000, base_ms=0, per_token_us=1, decode_ms=0) for _ in range(2)]
    with serve(create_app(engines[0])) as a, serve(create_app(engines[1])) as b:
        dead = f"http://127.0.0.1:{free_port()}/v1"
        w = RouteWorkload(apps=4, requests_per_app=5, system_tokens=300, concurrency=2)
        out = asyncio.run(run_policy([f"{a}/v1", dead, f"{b}/v1"], "prefix", w, MODEL, 1.0))
    assert out["errors"] == 0 and out["requests"] == 20
    assert out["retried"] >= 1
    down = next(r for r in out["pool"]["replicas"] if r["url"] == dead)
    assert down["health"]["state"] != "up" and down["retried_away"] >= 1
    assert engines[0].requests + engines[1].requests == 20


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


def test_bad_flags_are_usage_errors():
    runner = CliRunner()
    both = runner.invoke(bench_route_command, ["--fake", "--base-url", "http://127.0.0.1:1/v1"])
    assert both.exit_code == 2 and "exclude each other" in both.output
    twice = runner.invoke(
        bench_route_command, ["--base-url", "http://a:1/v1", "--base-url", "http://a:1/v1/"]
    )
    assert twice.exit_code == 2 and "twice" in twice.output
    assert runner.invoke(bench_route_command, ["--fake", "--apps", "0"]).exit_code == 2
    policy = runner.invoke(bench_route_command, ["--fake", "--policies", "random"])
    assert policy.exit_code == 2 and "pick from" in policy.output
