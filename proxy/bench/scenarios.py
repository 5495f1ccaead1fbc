"""The measured rounds of ``prefixgate bench proxy``: every side the same load, side by side.

A scenario (plain or streaming, at one concurrency) sends the same requests to each side in
turn, round after round, each round starting one side later (noise and position hit every side
alike), and reports each side's p50 / p99 / mean latency (time to the last byte, or to the first
for streams), requests/s and errors, and what one side adds over another (:data:`SIDE_BY_SIDE`). :func:`measure` runs the
warm-up and the four scenarios, and with ``--store`` Redis's own count over them.
It starts no process (:mod:`proxy.bench.procs`). See docs/measured.md (the proxy).
"""

from __future__ import annotations

import asyncio

import click

from proxy.bench import redis_stats
from proxy.bench.chat_request import headers_for, request_body
from proxy.bench.http import Pool, RunResult, build_request, percentile, run_load

ROUNDS = 4
#: side → (the name of what it adds, the side it is measured over): ``NAME_p50_ms`` / ``NAME_p99_ms``.
SIDE_BY_SIDE = {
    "proxy": ("added", "direct"),
    "proxy_redis": ("redis_added", "proxy"),
    "proxy_rewrite": ("rewrite_added", "proxy"),
    "baseline": ("baseline_added", "direct"),
}
#: The fleet totals flush at most every 100 ms: wait this long for the last batch to land in the window.
FLUSH_WAIT_S = 0.3


def _stats(result: RunResult, key: str, target: str) -> dict[str, float]:
    values = [getattr(s, key) * 1000 for s in result.ok()]
    if not values:
        raise click.ClickException(f"every request sent {target} failed ({result.errors} errors)")
    return {
        "p50": percentile(values, 50),
        "p99": percentile(values, 99),
        "mean": sum(values) / len(values),
        "n": len(values),
    }


def compare(out: dict) -> None:
    """Adds to a scenario's figures what each side adds over the one it is measured over and, with
    a baseline, the new proxy's added latency over the old one's (None unless both added some)."""
    for side, (name, over) in SIDE_BY_SIDE.items():
        if side in out and over in out:
            out[f"{name}_p50_ms"] = out[side]["p50"] - out[over]["p50"]
            out[f"{name}_p99_ms"] = out[side]["p99"] - out[over]["p99"]
    if "baseline" in out:
        for q in ("p50", "p99"):
            old, new = out[f"baseline_added_{q}_ms"], out[f"added_{q}_ms"]
            out[f"added_{q}_new_over_old"] = new / old if old > 0 and new > 0 else None


async def scenario(
    pools: dict[str, Pool],
    provider: str,
    size: int,
    stream: bool,
    requests: int,
    concurrency: int,
    rewrite: str | None = None,
    rounds: int = ROUNDS,
) -> dict:
    """One scenario's figures per side (``pools``: side → its connection pool). With ``rewrite``
    the bodies are volatile and every proxy side but ``proxy_rewrite`` is told ``off``."""
    results = {target: RunResult() for target in pools}
    per_round = max(1, requests // rounds)
    sides = list(pools.items())
    for r in range(rounds):
        for target, pool in sides[r % len(sides) :] + sides[: r % len(sides)]:
            extra = (
                {"x-prefixgate-rewrite": rewrite if target == "proxy_rewrite" else "off"}
                if rewrite and target != "direct"
                else {}
            )

            def make(i: int, port: int = pool.port, extra: dict = extra) -> bytes:
                path, body = request_body(
                    provider, size, r * per_round + i, stream, volatile=rewrite is not None
                )
                return build_request("127.0.0.1", port, path, body, {**headers_for(provider), **extra})

            part = await run_load(pool, make, per_round, concurrency)
            results[target].samples += part.samples
            results[target].wall_s += part.wall_s
            results[target].errors += part.errors
    key = "ttfb_s" if stream else "total_s"
    out: dict = {target: _stats(res, key, target) for target, res in results.items()}
    compare(out)
    for target, res in results.items():
        out[target]["rps"] = len(res.ok()) / res.wall_s
        out[target]["errors"] = res.errors
        out[target]["sent"] = len(res.samples) + res.errors
    return out


async def measure(
    ports: dict[str, int],
    provider: str,
    requests: int,
    concurrency: int,
    warmup: int,
    size: int,
    rewrite: str | None = None,
    redis_url: str | None = None,
    rounds: int = ROUNDS,
) -> tuple[dict, dict | None]:
    """The scenarios (``ports``: side → its port), and (with ``redis_url``) Redis's command
    counts over the measured rounds."""
    pools = {target: Pool("127.0.0.1", port) for target, port in ports.items()}
    try:
        for stream in (False, True):
            await scenario(pools, provider, size, stream, max(warmup, rounds), concurrency, rewrite, rounds)
        before = await asyncio.to_thread(redis_stats.snapshot, redis_url) if redis_url else None
        scenarios = {}
        for stream in (False, True):
            for conc in (1, concurrency):
                name = f"{'stream_ttfb' if stream else 'plain'}_c{conc}"
                scenarios[name] = await scenario(
                    pools, provider, size, stream, requests, conc, rewrite, rounds
                )
        counted = None
        if redis_url and before is not None:
            await asyncio.sleep(FLUSH_WAIT_S)
            calls = redis_stats.delta(before, await asyncio.to_thread(redis_stats.snapshot, redis_url))
            sent = sum(s["proxy_redis"]["sent"] for s in scenarios.values())
            counted = redis_stats.round_trips(calls, sent)
            counted["lookup_us"] = await redis_stats.lookup_timings(
                redis_url, max(200, min(2000, requests * 2))
            )
        return scenarios, counted
    finally:
        for pool in pools.values():
            await pool.aclose()
