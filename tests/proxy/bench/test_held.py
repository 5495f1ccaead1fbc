"""``prefixgate bench proxy --held N`` with tiny counts, and its streaming upstream alone."""

from __future__ import annotations

import json

import httpx
import pytest
from click.testing import CliRunner

from proxy.bench.command import bench_proxy_command
from proxy.bench.held import configure, open_streams, run_client, stream_upstream, summary
from proxy.bench.procs import free_ports

pytestmark = pytest.mark.e2e


def test_the_upstream_holds_streams_until_its_barrier_then_ends_them_whole(tmp_path):
    (port,) = free_ports(1)
    with stream_upstream(port, tmp_path) as upstream:
        configure(upstream, barrier=40, hold_s=30.0)
        got = summary(run_client(open_streams(port, 40, timeout_s=20)))
        stats = httpx.get(f"{upstream}/_stats").json()
        configure(upstream, barrier=1 << 30, hold_s=0.1)
        timed = summary(run_client(open_streams(port, 10, timeout_s=20)))
    assert got["ok"] == 40 and got["failed"] == {} and stats["max_open"] == 40 and stats["served"] == 40
    assert timed["ok"] == 10


def test_bench_proxy_held_reports_both_sides():
    result = CliRunner().invoke(
        bench_proxy_command,
        ["--held", "40", "--hold-s", "0.3", "--ramp-s", "0.1", "--rounds", "1", "--json"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["streams"] == 40 and data["rounds"] == 1
    for side in ("direct", "proxy"):
        assert data[side]["ok"] == 40 and data[side]["failed"] == {} and data[side]["peak_open"] >= 1
        assert 0 < data[side]["ttfb_p50_ms"] <= data[side]["ttfb_p99_ms"]
    assert data["pool"]["exhausted_total"] == 0 and data["pool"]["sized_by"] == "fd_limit"
    assert data["ttfb_p99_ratio"] > 0
