"""``prefixgate bench proxy``: the latency and throughput the proxy adds, measured side by side.

Starts the emulator and ``prefixgate serve`` on loopback and drives both with the same ~20 KB
request, direct then proxy in alternating rounds (:mod:`proxy.bench.scenarios`): p50/p99 latency,
what the proxy adds, requests/s, and a flag for a ~40 ms floor at concurrency 1 (Nagle + delayed
ACK). ``--store redis://…`` runs a Redis-store proxy beside the memory one, ``--baseline DIR`` an
older prefixgate's proxy from that checkout (new ÷ old), ``--held N`` held streams instead.
Prints one JSON object, then a table unless ``--json`` (:mod:`proxy.bench.proxy_tables`).
It judges nothing against targets beyond exiting 1 on request errors. See docs/measured.md.
"""

from __future__ import annotations

import asyncio
import os
import platform
import subprocess
import tempfile
from pathlib import Path

import click
import orjson

from proxy.bench import redis_stats
from proxy.bench.chat_request import request_body
from proxy.bench.procs import emulator_and_proxies
from proxy.bench.scenarios import ROUNDS, measure
from proxy.store.redis_urls import redacted

NAGLE_FLOOR_MS = 30.0


def _checkout(path: Path) -> dict:
    """A baseline checkout's folder and, when git knows it, its commit."""
    if not (path / "proxy" / "cli.py").is_file():
        raise click.BadParameter(
            f"{path} is not a prefixgate checkout (no proxy/cli.py)", param_hint="--baseline"
        )
    try:
        commit = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return {"dir": str(path), "commit": commit or None}


def _throughput(scenario: dict) -> dict:
    """Requests/s per side at concurrency N, over direct, and (with a baseline) new ÷ old."""
    out = {
        "direct": scenario["direct"]["rps"],
        "proxy": scenario["proxy"]["rps"],
        "proxy_over_direct": scenario["proxy"]["rps"] / scenario["direct"]["rps"],
    }
    if "baseline" in scenario:
        out["baseline"] = scenario["baseline"]["rps"]
        out["baseline_over_direct"] = scenario["baseline"]["rps"] / scenario["direct"]["rps"]
        out["new_over_old"] = scenario["proxy"]["rps"] / scenario["baseline"]["rps"]
    return out


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
    baseline: Path | None = None,
) -> dict:
    machine = {
        "cpus": os.cpu_count(),
        "load_1m_before": round(os.getloadavg()[0], 2),
        "python": platform.python_version(),
    }
    old = _checkout(baseline) if baseline is not None else None
    redis_url = redis_stats.bench_store_url(store) if store else None
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
            with emulator_and_proxies(Path(tmp), stores, profile, baseline) as (emu_port, proxy_ports):
                ports = {"direct": emu_port, "proxy": proxy_ports[0]}
                if redis_url:
                    ports["proxy_redis"] = proxy_ports[1]
                if rewrite:
                    ports["proxy_rewrite"] = proxy_ports[0]
                if baseline is not None:
                    ports["baseline"] = proxy_ports[-1]
                scenarios, counted = asyncio.run(
                    measure(ports, provider, requests, concurrency, warmup, size, rewrite, redis_url, rounds)
                )
                if counted is not None:
                    # the Redis proxy's own view: look-ups ok / unavailable / skipped, breaker openings
                    counted["proxy_store"] = redis_stats.store_health(ports["proxy_redis"])
    finally:
        if redis_url:
            try:
                redis_stats.drop_keys(redis_url)
            except Exception:
                pass
    path, body = request_body(provider, size, 0, False, volatile=rewrite is not None)
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
        "throughput_rps": _throughput(scenarios[f"plain_c{concurrency}"]),
        "nagle_suspect": scenarios["plain_c1"]["added_p50_ms"] >= NAGLE_FLOOR_MS,
        "rewrite": rewrite,
        "store": redacted(store) if store else None,
        "redis": counted,
        "baseline": old,
        "errors": sum(s[t]["errors"] for s in scenarios.values() for t in ports),
        "proxy_profile": str(profile) if profile else None,
    }


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
@click.option(
    "--baseline",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=None,
    metavar="DIR",
    help="Also run the proxy of an older prefixgate checkout (e.g. `git worktree add /tmp/pg-old REV`) with the same "
    "flags and upstream, in the same alternating rounds: what each adds, and new ÷ old.",
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
    baseline: Path | None,
    json_only: bool,
    profile: Path | None,
) -> None:
    """Latency added by the proxy (p50/p99, concurrency 1 and N, plain and streaming TTFB) and
    requests/s through the proxy vs direct, against the emulator on loopback (with --baseline DIR,
    an older checkout's proxy beside it); with --held N, N concurrent long streams against a tiny
    streaming upstream instead."""
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
        baseline.resolve() if baseline else None,
    )
    click.echo(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())
    if not json_only:
        from proxy.bench.proxy_tables import table

        table(result)
    if result["errors"]:
        raise click.ClickException(f"{result['errors']} requests failed; the figures above exclude them")
