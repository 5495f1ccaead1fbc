"""What ``bench route`` makes of its runs: each run's share of the ideal cached tokens, the issue's
aims (prefix vs round robin), and the table.

The ideal: every app's requests but its first reading the most any of that app's requests read
in any run (its cacheable head). Pure arithmetic on the runs' numbers, and printing.
"""

from __future__ import annotations

from proxy.replicas.load_share import ROUND_ROBIN


def aims(runs: dict) -> dict:
    """The issue's aims on this run: prefix ≥ 3× round robin's cached tokens, ≤ ½ its TTFT p50,
    no replica over 1.5× the mean load (None where a policy did not run)."""
    rr, px = runs.get(ROUND_ROBIN), runs.get("prefix")
    if rr is None or px is None:
        return {}
    cached = px["cached_tokens"] / rr["cached_tokens"] if rr["cached_tokens"] else None
    ttft = px["ttft_p50_s"] / rr["ttft_p50_s"] if rr["ttft_p50_s"] and px["ttft_p50_s"] else None
    load = px["max_over_mean_load"]
    return {
        "prefix_over_round_robin_cached": None if cached is None else round(cached, 2),
        "prefix_over_round_robin_ttft_p50": None if ttft is None else round(ttft, 3),
        "prefix_max_over_mean_load": load,
        "met": bool(cached and cached >= 3 and ttft is not None and ttft <= 0.5 and load and load <= 1.5),
    }


def add_ideal(runs: dict) -> None:
    """Each run's share of the ideal: every app's requests but its first reading the most any of
    that app's requests read in any run (its cacheable head)."""
    best: dict[int, int] = {}
    for r in runs.values():
        for app, n in r["app_cacheable_tokens"].items():
            best[app] = max(best.get(app, 0), n)
    for r in runs.values():
        ideal = sum(max(0, count - 1) * best.get(app, 0) for app, count in r["app_requests"].items())
        r["ideal_cached_tokens"] = ideal
        r["of_ideal"] = round(r["cached_tokens"] / ideal, 4) if ideal else None


def print_table(result: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    w = result["workload"]
    table = Table(
        title=f"{len(result['replicas'])} {result['mode']} replicas (caches of ~{result['cache_prompts']} prompts), "
        f"{w['apps']} apps × {w['requests_per_app']} requests, {w['system_tokens']}-token system prompts, "
        f"concurrency {w['concurrency']}"
    )
    for col in (
        "policy",
        "cached share",
        "of ideal",
        "TTFT p50 ms",
        "TTFT p99 ms",
        "req/s",
        "max/mean load",
        "errors",
    ):
        table.add_column(col, justify="left" if col == "policy" else "right")
    for policy, r in result["runs"].items():
        table.add_row(
            policy,
            "—" if r["cached_share"] is None else f"{r['cached_share']:.1%}",
            "—" if r["of_ideal"] is None else f"{r['of_ideal']:.1%}",
            "—" if r["ttft_p50_s"] is None else f"{r['ttft_p50_s'] * 1000:.1f}",
            "—" if r["ttft_p99_s"] is None else f"{r['ttft_p99_s'] * 1000:.1f}",
            f"{r['requests_per_s']}",
            f"{r['max_over_mean_load']}",
            f"{r['errors']}",
        )
    console = Console()
    console.print(table)
    if result["aims"]:
        a = result["aims"]
        console.print(
            f"prefix vs round robin: {a['prefix_over_round_robin_cached']}× the cached tokens (aim ≥ 3), "
            f"{a['prefix_over_round_robin_ttft_p50']}× the TTFT p50 (aim ≤ 0.5), max/mean load "
            f"{a['prefix_max_over_mean_load']} (aim ≤ 1.5): {'met' if a['met'] else 'NOT met'}"
        )
