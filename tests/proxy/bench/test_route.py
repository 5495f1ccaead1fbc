"""``bench route`` through a real ``prefixgate serve --config`` child over fake engines with small
caches: prefix routing beats round robin, a replica killed mid-run costs no client error, and the
command is ``prefixgate bench route``."""

from __future__ import annotations

import json

from click.testing import CliRunner

from proxy.bench.route import bench_route_command, run_bench
from proxy.bench.route_workload import RouteWorkload
from proxy.cli import cli

SMALL = RouteWorkload(apps=6, requests_per_app=8, system_tokens=1500, concurrency=4)


def test_prefix_routing_through_the_proxy_reads_more_from_cache_than_round_robin():
    result = run_bench(SMALL, 3, "fake", [], ["round-robin", "prefix"], 2, 1)
    rr, px = result["runs"]["round-robin"], result["runs"]["prefix"]
    assert rr["errors"] == px["errors"] == 0
    assert px["cached_tokens"] > 1.5 * rr["cached_tokens"]
    assert px["of_ideal"] > rr["of_ideal"]
    # the per-replica counts are the proxy's: every request went through its pool
    assert sum(r["requests"] for r in px["pool"]["replicas"]) == SMALL.requests
    assert px["pool"]["routing"] == "prefix" and px["pool"]["heads"] == SMALL.apps
    assert sorted(r["heads"] for r in px["pool"]["replicas"]) == [2, 2, 2]  # 6 apps, 3 replicas
    assert set(result["aims"]) == {
        "prefix_over_round_robin_cached",
        "prefix_over_round_robin_ttft_p50",
        "prefix_max_over_mean_load",
        "met",
    }


def test_a_replica_that_stops_mid_run_costs_no_client_error():
    result = run_bench(SMALL, 3, "fake", [], ["prefix"], 2, 1, kill_at=0.4, kill_signal="term")
    run = result["runs"]["prefix"]
    assert run["errors"] == 0 and run["requests"] == SMALL.requests
    assert run["killed_after"] >= int(0.4 * SMALL.requests)
    states = [r["health"]["state"] for r in run["pool"]["replicas"]]
    assert states.count("up") == 2 and states[0] != "up"  # the first replica is the one stopped
    assert result["kill"] == {"at": 0.4, "signal": "term"}


def test_bench_route_is_a_prefixgate_bench_command_with_json_output():
    out = CliRunner().invoke(
        cli,
        ["bench", "route", "--fake", "--replicas", "2", "--apps", "2", "--requests-per-app", "3"]
        + ["--system-tokens", "300", "--concurrency", "2", "--policies", "prefix", "--json"],
    )
    assert out.exit_code == 0, out.output
    result = json.loads(out.output)
    assert result["mode"] == "fake" and result["runs"]["prefix"]["errors"] == 0
    assert result["runs"]["prefix"]["requests"] == 6
    assert "route" in CliRunner().invoke(cli, ["bench", "--help"]).output


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
    assert runner.invoke(bench_route_command, ["--fake", "--kill-at", "1.5"]).exit_code == 2
