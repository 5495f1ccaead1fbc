"""``prefixgate bench proxy`` with tiny counts: real emulator + proxy processes, JSON shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from proxy.bench.command import bench_proxy_command
from proxy.bench.http import percentile

pytestmark = pytest.mark.e2e


def test_percentile_interpolates():
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == pytest.approx(50.5)
    assert percentile(values, 99) == pytest.approx(99.01)
    assert percentile([3.0], 99) == 3.0
    with pytest.raises(ValueError):
        percentile([], 50)


def test_bench_proxy_reports_consistent_positive_figures():
    result = CliRunner().invoke(
        bench_proxy_command,
        ["--requests", "8", "--warmup", "4", "--concurrency", "4", "--json"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["bench"] == "proxy" and data["errors"] == 0
    assert 19_000 <= data["request_bytes"] <= 21_000
    assert set(data["latency_ms"]) == {"plain_c1", "plain_c4", "stream_ttfb_c1", "stream_ttfb_c4"}
    for name, scenario in data["latency_ms"].items():
        for side in ("direct", "proxy"):
            s = scenario[side]
            assert s["n"] == data["requests_per_scenario"] == 8, name
            assert 0 < s["p50"] <= s["p99"], (name, side)
            assert s["rps"] > 0 and s["errors"] == 0
        assert scenario["added_p50_ms"] == pytest.approx(scenario["proxy"]["p50"] - scenario["direct"]["p50"])
        assert scenario["added_p99_ms"] == pytest.approx(scenario["proxy"]["p99"] - scenario["direct"]["p99"])
    t = data["throughput_rps"]
    assert t["direct"] > 0 and t["proxy"] > 0
    assert t["proxy_over_direct"] == pytest.approx(t["proxy"] / t["direct"])
    assert t["direct"] == pytest.approx(data["latency_ms"]["plain_c4"]["direct"]["rps"])
    assert isinstance(data["nagle_suspect"], bool)
    assert data["machine"]["cpus"] >= 1


def test_bench_proxy_anthropic_route_with_a_proxy_profile(tmp_path):
    import pstats

    profile = tmp_path / "proxy.prof"
    result = CliRunner().invoke(
        bench_proxy_command,
        [
            "--requests",
            "4",
            "--warmup",
            "0",
            "--concurrency",
            "2",
            "--provider",
            "anthropic",
            "--json",
            "--profile",
            str(profile),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["route"] == "/v1/messages" and data["errors"] == 0
    assert data["proxy_profile"] == str(profile.resolve())
    functions = {f"{path}:{name}" for path, _, name in pstats.Stats(str(profile)).stats}
    assert any("proxy/handler.py" in f or "proxy/app.py" in f for f in functions)


def test_bench_proxy_measures_the_rewrite_side_by_side():
    result = CliRunner().invoke(
        bench_proxy_command,
        ["--requests", "4", "--warmup", "0", "--concurrency", "2", "--rewrite", "aggressive", "--json"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["rewrite"] == "aggressive" and data["errors"] == 0
    for scenario in data["latency_ms"].values():
        assert scenario["proxy_rewrite"]["n"] == 4
        assert scenario["rewrite_added_p50_ms"] == pytest.approx(
            scenario["proxy_rewrite"]["p50"] - scenario["proxy"]["p50"]
        )


def test_bench_proxy_with_a_redis_store_side_by_side_counts_one_lookup_per_request(tmp_path):
    import redis

    from proxy.bench.redis_stats import round_trips
    from tests.support.redis_procs import RedisProcess

    server = RedisProcess(tmp_path)  # its own Redis: INFO commandstats then counts only this run
    server.start()
    try:
        result = CliRunner().invoke(
            bench_proxy_command,
            [
                "--requests",
                "4",
                "--rounds",
                "4",
                "--warmup",
                "0",
                "--concurrency",
                "2",
                "--store",
                server.url,
                "--json",
            ],
            catch_exceptions=False,
        )
        left = [k.decode() for k in redis.Redis.from_url(server.url).scan_iter(match="prefixgate-bench-*")]
    finally:
        server.kill()
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["errors"] == 0 and data["store"] == server.url and data["rounds"] == 4
    for scenario in data["latency_ms"].values():
        assert scenario["proxy_redis"]["n"] == 4
        assert scenario["redis_added_p50_ms"] == pytest.approx(
            scenario["proxy_redis"]["p50"] - scenario["proxy"]["p50"]
        )
        assert scenario["redis_added_p99_ms"] == pytest.approx(
            scenario["proxy_redis"]["p99"] - scenario["proxy"]["p99"]
        )
    r = data["redis"]
    own = r["proxy_store"][
        "lookups_since_start"
    ]  # a look-up past its deadline on a starved machine skips a few: never more
    assert r["requests"] == 4 * 4 and r["lookup_calls"] <= 16
    if own["unavailable"] == own["skipped"] == 0:
        assert (
            r["lookup_calls"] == 16 and r["lookup_round_trips_per_request"] == 1.0
        )  # exactly one round trip each
    assert r["script_calls"] == r["lookup_calls"] + r["fleet_flushes"] and r["fleet_flushes"] <= r["requests"]
    assert r["lookup_us"]["n"] >= 200 and 0 < r["lookup_us"]["resp_p50_us"] <= r["lookup_us"]["resp_p99_us"]
    assert 0 < r["lookup_us"]["redis_py_p50_us"] <= r["lookup_us"]["redis_py_p99_us"]
    assert left == []  # the bench's keys are gone
    # the split, on Redis's own names: two flushes (one GET each) among 12 script calls, inner commands not round trips
    split = round_trips(
        {"evalsha": 12, "get": 2, "hincrby": 40, "expire": 4, "exists": 15, "set": 22, "ping": 1}, 10
    )
    assert (split["lookup_calls"], split["lookup_round_trips_per_request"], split["fleet_flushes"]) == (
        10,
        1.0,
        2,
    )
    assert split["fleet_flush_commands"] == 46 and split["other_round_trips"] == {"ping": 1}
    # a flush whose EVALSHA met NOSCRIPT and went again as EVAL: one refused call, still one flush, no extra look-up
    retried = round_trips(
        {"evalsha": 11, "evalsha|failed": 1, "eval": 1, "get": 2, "exists": 10, "set": 22}, 10
    )
    assert (retried["lookup_calls"], retried["fleet_flushes"], retried["script_calls_refused"]) == (10, 2, 1)
    assert retried["other_round_trips"] == {}


def test_bench_proxy_store_must_be_one_redis():
    result = CliRunner().invoke(
        bench_proxy_command, ["--requests", "4", "--store", "redis-cluster://h:1", "--json"]
    )
    assert result.exit_code == 2 and "redis://" in result.output


def test_bench_proxy_runs_a_baseline_checkout_side_by_side():
    """The baseline here is this very checkout, run as a second proxy from its own folder: the
    figures' shape and arithmetic, not a speed."""
    root = Path(__file__).resolve().parents[3]
    result = CliRunner().invoke(
        bench_proxy_command,
        ["--requests", "4", "--warmup", "0", "--concurrency", "2", "--baseline", str(root), "--json"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["errors"] == 0 and data["baseline"]["dir"] == str(root)
    for scenario in data["latency_ms"].values():
        assert scenario["baseline"]["n"] == 4 and scenario["baseline"]["errors"] == 0
        for q in ("p50", "p99"):
            old, new = scenario[f"baseline_added_{q}_ms"], scenario[f"added_{q}_ms"]
            assert old == pytest.approx(scenario["baseline"][q] - scenario["direct"][q])
            ratio = scenario[f"added_{q}_new_over_old"]
            assert ratio == (pytest.approx(new / old) if old > 0 and new > 0 else None)
    t = data["throughput_rps"]
    assert t["new_over_old"] == pytest.approx(t["proxy"] / t["baseline"])
    assert t["baseline_over_direct"] == pytest.approx(t["baseline"] / t["direct"])


def test_bench_proxy_baseline_must_be_a_checkout(tmp_path):
    result = CliRunner().invoke(
        bench_proxy_command, ["--requests", "4", "--baseline", str(tmp_path), "--json"]
    )
    assert result.exit_code == 2 and "not a prefixgate checkout" in result.output
