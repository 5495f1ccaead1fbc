"""``prefixgate bench proxy`` with tiny counts: real emulator + proxy processes, JSON shape."""

from __future__ import annotations

import json

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
        bench_proxy_command, ["--requests", "8", "--warmup", "4", "--concurrency", "4", "--json"], catch_exceptions=False
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
        ["--requests", "4", "--warmup", "0", "--concurrency", "2", "--provider", "anthropic", "--json",
         "--profile", str(profile)],
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
        bench_proxy_command, ["--requests", "4", "--warmup", "0", "--concurrency", "2", "--rewrite", "aggressive", "--json"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["rewrite"] == "aggressive" and data["errors"] == 0
    for scenario in data["latency_ms"].values():
        assert scenario["proxy_rewrite"]["n"] == 4
        assert scenario["rewrite_added_p50_ms"] == pytest.approx(scenario["proxy_rewrite"]["p50"] - scenario["proxy"]["p50"])
