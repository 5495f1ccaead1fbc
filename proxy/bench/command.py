"""``prefixgate bench proxy``: the latency and throughput the proxy adds, measured side by side.

Starts the emulator and ``prefixgate serve`` on loopback and drives both with the same ~20 KB
request (:mod:`proxy.bench.http`), direct then proxy in alternating rounds, per scenario (plain /
streaming, concurrency 1 and N): p50/p99 latency, what the proxy adds, requests/s, and a flag
for a ~40 ms floor at concurrency 1 (Nagle + delayed ACK). With ``--store redis://…`` a Redis
proxy runs beside the memory one (``redis_added_p50_ms`` / ``_p99_ms``, and Redis's own command
counts, :mod:`proxy.bench.redis_stats`). Prints one JSON object, then a table unless ``--json``.
It judges nothing against targets beyond exiting 1 on request errors. See docs/measured.md.
"""

from __future__ import annotations

import asyncio
import os
import platform
import tempfile
from pathlib import Path

import click
import orjson

from proxy.bench import redis_stats
from proxy.bench.http import Pool, RunResult, build_request, percentile, run_load
from proxy.bench.procs import emulator_and_proxies
from proxy.store.redis_store import redacted

ROUNDS = 4
NAGLE_FLOOR_MS = 30.0


def _ulid(i: int) -> str:
    """A ULID-like id for request ``i`` (Crockford base32, letters well beyond hex)."""
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    n = (i * 0x9E3779B97F4A7C15) % (32**26)
    return "".join(alphabet[(n >> (5 * k)) & 31] for k in range(26))


def request_body(provider: str, size: int, i: int, stream: bool, volatile: bool = False) -> tuple[str, bytes]:
    """A chat request of about ``size`` bytes; ``volatile``: its system prompt starts with the
    time and a request id, as real agents' do (what ``--rewrite aggressive`` works on)."""
    phrase = "You are the support assistant for Example Corp. Follow the policy exactly. "
    head = (
        f"Current date and time: 2026-12-01 {8 + i // 3600 % 12:02d}:{i // 60 % 60:02d}:{i % 60:02d} UTC\nRequest id: {_ulid(i)}\n"
        if volatile
        else ""
    )
    system = head + (phrase * (size // len(phrase) + 1))[: max(0, size - len(head))]
    question = f"Question {i}: can I get a refund for order {1000 + i}?"
    if provider == "anthropic":
        body = {
            "model": "claude-sonnet-4-6",
            "max_tokens": 16,
            "stream": stream,
            "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": question}],
        }
        return "/v1/messages", orjson.dumps(body)
    body = {
        "model": "gpt-4o",
        "max_tokens": 16,
        "stream": stream,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": question}],
    }
    return "/v1/chat/completions", orjson.dumps(body)


def _headers(provider: str) -> dict[str, str]:
    if provider == "anthropic":
        return {"x-api-key": "sk-ant-bench", "anthropic-version": "2023-06-01"}
    return {"authorization": "Bearer sk-bench"}


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


async def _scenario(
    pools: dict[str, Pool],
    provider: str,
    size: int,
    stream: bool,
    requests: int,
    concurrency: int,
    rewrite: str | None = None,
    rounds: int = ROUNDS,
) -> dict:
    results = {target: RunResult() for target in pools}
    per_round = max(1, requests // rounds)
    for r in range(rounds):
        for target, pool in pools.items():
            extra = (
                {"x-prefixgate-rewrite": rewrite if target == "proxy_rewrite" else "off"}
                if rewrite and target != "direct"
                else {}
            )

            def make(i: int, port: int = pool.port, extra: dict = extra) -> bytes:
                path, body = request_body(
                    provider, size, r * per_round + i, stream, volatile=rewrite is not None
                )
                return build_request("127.0.0.1", port, path, body, {**_headers(provider), **extra})

            part = await run_load(pool, make, per_round, concurrency)
            results[target].samples += part.samples
            results[target].wall_s += part.wall_s
            results[target].errors += part.errors
    key = "ttfb_s" if stream else "total_s"
    out: dict = {target: _stats(res, key, target) for target, res in results.items()}
    out["added_p50_ms"] = out["proxy"]["p50"] - out["direct"]["p50"]
    out["added_p99_ms"] = out["proxy"]["p99"] - out["direct"]["p99"]
    if "proxy_redis" in out:  # the Redis store's cost over the memory store: two proxies, side by side
        out["redis_added_p50_ms"] = out["proxy_redis"]["p50"] - out["proxy"]["p50"]
        out["redis_added_p99_ms"] = out["proxy_redis"]["p99"] - out["proxy"]["p99"]
    if "proxy_rewrite" in out:  # the rewrite's own cost: the same proxy, header off vs the mode, side by side
        out["rewrite_added_p50_ms"] = out["proxy_rewrite"]["p50"] - out["proxy"]["p50"]
        out["rewrite_added_p99_ms"] = out["proxy_rewrite"]["p99"] - out["proxy"]["p99"]
    for target, res in results.items():
        out[target]["rps"] = len(res.ok()) / res.wall_s
        out[target]["errors"] = res.errors
        out[target]["sent"] = len(res.samples) + res.errors
    return out


async def _measure(
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
    """The scenarios, and (with ``redis_url``) Redis's command counts over the measured rounds."""
    pools = {target: Pool("127.0.0.1", port) for target, port in ports.items()}
    try:
        for stream in (False, True):
            await _scenario(pools, provider, size, stream, max(warmup, rounds), concurrency, rewrite, rounds)
        before = await asyncio.to_thread(redis_stats.snapshot, redis_url) if redis_url else None
        scenarios = {}
        for stream in (False, True):
            for conc in (1, concurrency):
                name = f"{'stream_ttfb' if stream else 'plain'}_c{conc}"
                scenarios[name] = await _scenario(
                    pools, provider, size, stream, requests, conc, rewrite, rounds
                )
        counted = None
        if redis_url and before is not None:
            await asyncio.sleep(
                0.3
            )  # let the fleet totals' last batched flush (≤ 100 ms apart) land in the window
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


def _bench_store_url(url: str) -> str:
    """``url`` with a throwaway ``key_prefix`` (the bench's keys never mix with a real proxy's)."""
    from urllib.parse import urlencode, urlsplit, urlunsplit

    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise click.BadParameter(
            "bench proxy --store wants a redis:// URL (one Redis: its INFO commandstats counts the round trips)",
            param_hint="--store",
        )
    clean, _ = redis_stats.split_key_prefix(url)
    parts = urlsplit(clean)
    query = (parts.query + "&" if parts.query else "") + urlencode(
        {"key_prefix": f"prefixgate-bench-{os.urandom(4).hex()}:"}
    )
    return urlunsplit(parts._replace(query=query))


def _store_health(port: int) -> dict | None:
    """The store part of a proxy's ``/prefixgate/health`` (its breaker and look-up counts since start)."""
    import httpx

    try:
        breaker = (
            httpx.get(f"http://127.0.0.1:{port}/prefixgate/health", timeout=10).json().get("breaker") or {}
        )
    except (httpx.HTTPError, ValueError):
        return None
    return {
        "lookups_since_start": breaker.get("lookups"),
        "breaker_openings": breaker.get("openings"),
        "state": breaker.get("state"),
    }


def run_bench(
    provider: str,
    requests: int,
    concurrency: int,
    warmup: int,
    size: int,
    profile: Path | None = None,
    rewrite: str | None = None,
    store: str | None = None,
    rounds: int = ROUNDS,
) -> dict:
    machine = {
        "cpus": os.cpu_count(),
        "load_1m_before": round(os.getloadavg()[0], 2),
        "python": platform.python_version(),
    }
    redis_url = _bench_store_url(store) if store else None
    if redis_url:
        try:
            redis_stats.snapshot(redis_url)
        except Exception as exc:
            raise click.ClickException(
                f"Redis at {redacted(store)} does not answer: {type(exc).__name__}: {exc}"
            ) from None
    stores = ["memory", redis_url] if redis_url else ["memory"]
    try:
        with tempfile.TemporaryDirectory(prefix="prefixgate-bench-") as tmp:
            with emulator_and_proxies(Path(tmp), stores, profile) as (emu_port, proxy_ports):
                ports = {"direct": emu_port, "proxy": proxy_ports[0]}
                if redis_url:
                    ports["proxy_redis"] = proxy_ports[1]
                if rewrite:
                    ports["proxy_rewrite"] = proxy_ports[0]
                scenarios, counted = asyncio.run(
                    _measure(ports, provider, requests, concurrency, warmup, size, rewrite, redis_url, rounds)
                )
                if (
                    counted is not None
                ):  # the Redis proxy's own view: look-ups ok / unavailable / skipped, breaker openings
                    counted["proxy_store"] = _store_health(ports["proxy_redis"])
    finally:
        if redis_url:
            try:
                redis_stats.drop_keys(redis_url)
            except Exception:  # the keys expire with their TTL anyway
                pass
    path, body = request_body(provider, size, 0, False, volatile=rewrite is not None)
    plain_n = scenarios[f"plain_c{concurrency}"]
    return {
        "bench": "proxy",
        "provider": provider,
        "route": path,
        "request_bytes": len(body),
        "requests_per_scenario": max(1, requests // rounds) * rounds,
        "rounds": rounds,
        "warmup": warmup,
        "concurrency": concurrency,
        "setup": "emulator, proxy and client in separate processes on loopback; HTTP/1.1 keep-alive, TCP_NODELAY",
        "machine": machine,
        "latency_ms": scenarios,
        "throughput_rps": {
            "direct": plain_n["direct"]["rps"],
            "proxy": plain_n["proxy"]["rps"],
            "proxy_over_direct": plain_n["proxy"]["rps"] / plain_n["direct"]["rps"],
        },
        "nagle_suspect": scenarios["plain_c1"]["added_p50_ms"] >= NAGLE_FLOOR_MS,
        "rewrite": rewrite,
        "store": redacted(store) if store else None,
        "redis": counted,
        "errors": sum(s[t]["errors"] for s in scenarios.values() for t in ports),
        "proxy_profile": str(profile) if profile else None,
    }


def _table(result: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(
        title=f"prefixgate bench proxy — {result['provider']} {result['route']}, "
        f"{result['request_bytes']} B request, {result['requests_per_scenario']} requests/scenario"
    )
    for col in (
        "scenario (ms, req/s)",
        "direct p50",
        "proxy p50",
        "added p50",
        "direct p99",
        "proxy p99",
        "added p99",
        "direct req/s",
        "proxy req/s",
    ):
        table.add_column(col, justify="left" if col.startswith("scenario") else "right", no_wrap=True)
    for name, s in result["latency_ms"].items():
        table.add_row(
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
    console.print(table)
    if result.get("redis") is not None:
        _redis_table(console, result)
    t = result["throughput_rps"]
    console.print(
        f"throughput at concurrency {result['concurrency']}: proxy {t['proxy']:.0f} req/s = "
        f"{t['proxy_over_direct']:.0%} of direct {t['direct']:.0f} req/s"
        + (
            "   [red]~40 ms floor at concurrency 1: Nagle/delayed-ACK suspected[/red]"
            if result["nagle_suspect"]
            else ""
        )
    )
    if result.get("rewrite"):
        for name, s in result["latency_ms"].items():
            console.print(
                f"--rewrite {result['rewrite']} adds over off ({name}): p50 {s['rewrite_added_p50_ms']:+.3f} ms, p99 {s['rewrite_added_p99_ms']:+.3f} ms"
            )


def _redis_table(console, result: dict) -> None:
    from rich.table import Table

    table = Table(title=f"Redis store ({result['store']}) vs memory store, side by side")
    for col in (
        "scenario (ms)",
        "memory p50",
        "redis p50",
        "redis added p50",
        "memory p99",
        "redis p99",
        "redis added p99",
    ):
        table.add_column(col, justify="left" if col.startswith("scenario") else "right", no_wrap=True)
    for name, s in result["latency_ms"].items():
        table.add_row(
            name,
            f"{s['proxy']['p50']:.2f}",
            f"{s['proxy_redis']['p50']:.2f}",
            f"{s['redis_added_p50_ms']:+.3f}",
            f"{s['proxy']['p99']:.2f}",
            f"{s['proxy_redis']['p99']:.2f}",
            f"{s['redis_added_p99_ms']:+.3f}",
        )
    console.print(table)
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


@click.command("proxy")
@click.option(
    "--requests",
    default=800,
    show_default=True,
    type=click.IntRange(4, 1_000_000),
    help="Measured requests per scenario and side (split into --rounds alternating rounds).",
)
@click.option(
    "--rounds",
    default=ROUNDS,
    show_default=True,
    type=click.IntRange(1, 100_000),
    help="Alternating rounds per scenario (direct, proxy, …): more, shorter rounds spread a busy machine's noise "
    "evenly over the sides.",
)
@click.option(
    "--concurrency",
    default=32,
    show_default=True,
    type=click.IntRange(1, 1024),
    help="Connections for the high-concurrency scenarios (concurrency 1 is always measured).",
)
@click.option(
    "--warmup",
    default=100,
    show_default=True,
    type=click.IntRange(0, 100_000),
    help="Warm-up requests per side before measuring.",
)
@click.option(
    "--body-kb", default=20, show_default=True, type=click.IntRange(1, 16_384), help="Request size in KB."
)
@click.option("--provider", default="openai", show_default=True, type=click.Choice(["openai", "anthropic"]))
@click.option(
    "--rewrite",
    type=click.Choice(["safe", "aggressive"]),
    default=None,
    help="Also send through the proxy with x-prefixgate-rewrite MODE (bodies then carry a clock and a request id) and report what the rewrite adds over off, side by side.",
)
@click.option(
    "--store",
    default=None,
    metavar="REDIS_URL",
    help="Also run a proxy with --store REDIS_URL (a throwaway key prefix) beside the memory-store one, side by side: "
    "the latency the Redis store adds and Redis's own count of its round trips per request (INFO commandstats; "
    "exact when nothing else uses that Redis).",
)
@click.option(
    "--held",
    default=0,
    show_default=True,
    type=click.IntRange(0, 100_000),
    help="Instead: N concurrent held streams (proxy.bench.held), direct and through the proxy in --rounds alternating "
    "rounds: TTFB p50/p99 per side and their ratio, failures by cause, the proxy's pool.",
)
@click.option(
    "--hold-s",
    default=3.0,
    show_default=True,
    type=click.FloatRange(0, 3600),
    help="--held: seconds each stream stays open after its first event.",
)
@click.option(
    "--ramp-s",
    default=2.0,
    show_default=True,
    type=click.FloatRange(0, 3600),
    help="--held: seconds over which the N streams are opened.",
)
@click.option(
    "--first-event-ms",
    default=0.0,
    show_default=True,
    type=click.FloatRange(0, 600_000),
    help="--held: the upstream's time to first event (a model's time to first token).",
)
@click.option("--json", "json_only", is_flag=True, help="Print only the JSON object (no table).")
@click.option(
    "--profile",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Run the proxy under cProfile and write its stats here (figures then include the profiler's cost).",
)
def bench_proxy_command(
    requests: int,
    rounds: int,
    concurrency: int,
    warmup: int,
    body_kb: int,
    provider: str,
    rewrite: str | None,
    store: str | None,
    held: int,
    hold_s: float,
    ramp_s: float,
    first_event_ms: float,
    json_only: bool,
    profile: Path | None,
) -> None:
    """Latency added by the proxy (p50/p99, concurrency 1 and N, plain and streaming TTFB) and
    requests/s through the proxy vs direct, against the emulator on loopback; with --held N,
    N concurrent long streams against a tiny streaming upstream instead."""
    if held:
        from proxy.bench import held as held_bench

        with tempfile.TemporaryDirectory(prefix="prefixgate-bench-held-") as tmp:
            result = held_bench.run_held_bench(
                held, hold_s, ramp_s, rounds, Path(tmp), first_s=first_event_ms / 1000
            )
        click.echo(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())
        if not json_only:
            held_bench.table(result)
        failed = sum(sum(result[side]["failed"].values()) for side in ("direct", "proxy"))
        if failed:
            raise click.ClickException(f"{failed} streams failed (by cause above)")
        return
    result = run_bench(
        provider,
        requests,
        concurrency,
        warmup,
        body_kb * 1000,
        profile.resolve() if profile else None,
        rewrite,
        store,
        rounds,
    )
    click.echo(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())
    if not json_only:
        _table(result)
    if result["errors"]:
        raise click.ClickException(f"{result['errors']} requests failed; the figures above exclude them")
