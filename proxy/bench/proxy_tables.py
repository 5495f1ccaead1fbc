"""The tables ``prefixgate bench proxy`` prints (to stderr) after its JSON object.

One row per scenario: direct vs proxy (p50, p99, what the proxy adds, requests/s); with
``--store``, the Redis-store proxy vs the memory one and Redis's own counts; with ``--baseline``,
the old proxy vs the new one (what each adds, new ÷ old); with ``--rewrite``, what it adds.
It computes nothing (the figures are :mod:`proxy.bench.scenarios`').
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table


def _columns(table: Table, *names: str) -> None:
    for col in names:
        table.add_column(col, justify="left" if col.startswith("scenario") else "right", no_wrap=True)


def table(result: dict) -> None:
    out = Table(
        title=f"prefixgate bench proxy — {result['provider']} {result['route']}, "
        f"{result['request_bytes']} B request, {result['requests_per_scenario']} requests/scenario"
    )
    _columns(out, "scenario (ms, req/s)", "direct p50", "proxy p50", "added p50", "direct p99")
    _columns(out, "proxy p99", "added p99", "direct req/s", "proxy req/s")
    for name, s in result["latency_ms"].items():
        out.add_row(
            name,
            f"{s['direct']['p50']:.2f}",
            f"{s['proxy']['p50']:.2f}",
            f"{s['added_p50_ms']:+.2f}",
            f"{s['direct']['p99']:.2f}",
            f"{s['proxy']['p99']:.2f}",
            f"{s['added_p99_ms']:+.2f}",
            f"{s['direct']['rps']:.0f}",
            f"{s['proxy']['rps']:.0f}",
        )
    console = Console(stderr=True, width=132)
    console.print(out)
    if result.get("redis") is not None:
        _redis_table(console, result)
    t = result["throughput_rps"]
    nagle = "   [red]~40 ms floor at concurrency 1: Nagle/delayed-ACK suspected[/red]"
    console.print(
        f"throughput at concurrency {result['concurrency']}: proxy {t['proxy']:.0f} req/s = "
        f"{t['proxy_over_direct']:.0%} of direct {t['direct']:.0f} req/s"
        + (nagle if result["nagle_suspect"] else "")
    )
    if result.get("baseline") is not None:
        _baseline_table(console, result)
    if result.get("rewrite"):
        for name, s in result["latency_ms"].items():
            console.print(
                f"--rewrite {result['rewrite']} adds over off ({name}): p50 {s['rewrite_added_p50_ms']:+.3f} ms, "
                f"p99 {s['rewrite_added_p99_ms']:+.3f} ms"
            )


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}×"


def _baseline_table(console: Console, result: dict) -> None:
    out = Table(title=f"new proxy vs the baseline ({result['baseline']['dir']}), side by side")
    _columns(
        out, "scenario (ms)", "old +p50", "new +p50", "new/old p50", "old +p99", "new +p99", "new/old p99"
    )
    _columns(out, "old req/s", "new req/s")
    for name, s in result["latency_ms"].items():
        out.add_row(
            name,
            f"{s['baseline_added_p50_ms']:+.2f}",
            f"{s['added_p50_ms']:+.2f}",
            _ratio(s["added_p50_new_over_old"]),
            f"{s['baseline_added_p99_ms']:+.2f}",
            f"{s['added_p99_ms']:+.2f}",
            _ratio(s["added_p99_new_over_old"]),
            f"{s['baseline']['rps']:.0f}",
            f"{s['proxy']['rps']:.0f}",
        )
    console.print(out)
    t = result["throughput_rps"]
    console.print(
        f"throughput at concurrency {result['concurrency']}: old {t['baseline_over_direct']:.0%} of direct, "
        f"new {t['proxy_over_direct']:.0%}; new ÷ old {t['new_over_old']:.2f}×"
    )


def _redis_table(console: Console, result: dict) -> None:
    out = Table(title=f"Redis store ({result['store']}) vs memory store, side by side")
    _columns(out, "scenario (ms)", "memory p50", "redis p50", "redis added p50")
    _columns(out, "memory p99", "redis p99", "redis added p99")
    for name, s in result["latency_ms"].items():
        out.add_row(
            name,
            f"{s['proxy']['p50']:.2f}",
            f"{s['proxy_redis']['p50']:.2f}",
            f"{s['redis_added_p50_ms']:+.3f}",
            f"{s['proxy']['p99']:.2f}",
            f"{s['proxy_redis']['p99']:.2f}",
            f"{s['redis_added_p99_ms']:+.3f}",
        )
    console.print(out)
    r = result["redis"]
    per = r["lookup_round_trips_per_request"]
    console.print(
        f"Redis INFO commandstats over the measured rounds: {r['lookup_calls']} look-ups for {r['requests']} requests "
        f"= {per:.3f} round trips per request; fleet totals: {r['fleet_flushes']} flushes "
        f"({r['fleet_flush_commands']} commands inside them); other round trips: {r['other_round_trips'] or 'none'}"
    )
    if r.get("proxy_store"):
        console.print(
            f"the Redis proxy's own count since it started (warm-up included): {r['proxy_store']['lookups_since_start']}, "
            f"breaker openings {r['proxy_store']['breaker_openings']}"
        )
    t = r["lookup_us"]
    console.print(
        f"one look-up alone ({t['chain']}-entry chain, {t['n']} calls each, interleaved): store's RESP client "
        f"p50 {t['resp_p50_us']:.0f} µs / p99 {t['resp_p99_us']:.0f} µs; redis-py's Script "
        f"p50 {t['redis_py_p50_us']:.0f} µs / p99 {t['redis_py_p99_us']:.0f} µs"
    )
