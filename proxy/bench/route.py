"""``prefixgate bench route``: round robin vs least-loaded vs prefix routing over several engines.

N ``prefixgate local`` replicas (the demo model, each KV pool holding about ``--cache-prompts``
system prompts), or N fake engines with as small a cache (``--fake``, :mod:`.route_replica`), or
the engines at ``--base-url``; K apps with distinct system prompts in random order
(:mod:`.route_workload`), each policy in turn (:mod:`.route_run`). Per policy: cached share, TTFT
p50 / p99, throughput and load spread; then the issue's aims. It reports; it asserts nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from tempfile import TemporaryDirectory

import click
import httpx

from proxy.bench.procs import free_ports, wait_ready
from proxy.bench.route_replica import MODEL as FAKE_MODEL
from proxy.bench.route_run import run_policy
from proxy.bench.route_workload import RouteWorkload
from proxy.replicas.load_share import DEFAULT_EPSILON, POLICIES, ROUND_ROBIN
from proxy.replicas.replica_set import normalised_urls

LOCAL_TOKENS_PER_ESTIMATE = 1.15  # the demo tokenizer cuts these words into ~1.08 tokens per 4 bytes


@contextlib.contextmanager
def _processes(
    commands: list[list[str]], ready: list[str], workdir: Path, timeout_s: float
) -> Iterator[None]:
    procs: list[subprocess.Popen] = []
    try:
        for i, cmd in enumerate(commands):
            with open(workdir / f"replica-{i}.log", "wb") as log:
                procs.append(subprocess.Popen([sys.executable, "-m", *cmd], stdout=log, stderr=log))
        for i, (proc, url) in enumerate(zip(procs, ready)):
            wait_ready(url, proc, f"replica {i}", timeout_s, workdir / f"replica-{i}.log")
        yield
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)


def fake_commands(ports: list[int], capacity_tokens: int) -> list[list[str]]:
    return [
        ["proxy.bench.route_replica", "--port", str(p), "--capacity-tokens", str(capacity_tokens)]
        for p in ports
    ]


def local_commands(ports: list[int], w: RouteWorkload, cache_prompts: int, threads: int) -> list[list[str]]:
    per_prompt = math.ceil(w.prompt_tokens() * LOCAL_TOKENS_PER_ESTIMATE) + w.max_tokens
    context = min(8192, per_prompt + 64)
    blocks = max(math.ceil(context / 16), math.ceil((cache_prompts + 0.5) * per_prompt / 16))
    flags = ["--kv-blocks", str(blocks), "--max-context", str(context), "--threads", str(threads)]
    return [["proxy.cli", "local", "--port", str(p), *flags] for p in ports]


def _model_of(url: str) -> str:
    data = httpx.get(f"{url}/models", timeout=10.0, trust_env=False).json().get("data") or [{}]
    model = data[0].get("id")
    if not isinstance(model, str):
        raise click.ClickException(f"{url}/models lists no model")
    return model


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


def run_bench(
    w: RouteWorkload,
    n: int,
    mode: str,
    base_urls: list[str],
    policies: list[str],
    cache_prompts: int,
    epsilon: float,
    threads: int,
) -> dict:
    with TemporaryDirectory(prefix="prefixgate-route-") as tmp, contextlib.ExitStack() as stack:
        if mode == "base-url":
            urls = list(normalised_urls(base_urls, "--base-url"))
        else:
            ports = free_ports(n)
            urls = [f"http://127.0.0.1:{p}/v1" for p in ports]
            if mode == "fake":
                cmds, timeout = fake_commands(ports, cache_prompts * (w.prompt_tokens() + w.max_tokens)), 60.0
            else:
                cmds, timeout = local_commands(ports, w, cache_prompts, threads), 600.0
            stack.enter_context(_processes(cmds, [f"{u}/models" for u in urls], Path(tmp), timeout))
        model = FAKE_MODEL if mode == "fake" else _model_of(urls[0])
        runs = {p: asyncio.run(run_policy(urls, p, w, model, epsilon)) for p in policies}
    add_ideal(runs)
    return {
        "mode": mode,
        "replicas": urls,
        "model": model,
        "cache_prompts": cache_prompts,
        "epsilon": epsilon,
        "workload": w.__dict__,
        "runs": runs,
        "aims": aims(runs),
    }


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


def _policies(value: str) -> list[str]:
    names = [p.strip() for p in value.split(",") if p.strip()]
    bad = [p for p in names if p not in POLICIES]
    if bad or not names:
        raise click.BadParameter(f"pick from {', '.join(POLICIES)}; got {value!r}", param_hint="--policies")
    return names


@click.command("route")
@click.option("--replicas", "n", type=click.IntRange(1, 64), default=4, show_default=True)
@click.option(
    "--fake",
    is_flag=True,
    help="Fake engines with a limited LRU prefix cache (fast) instead of `prefixgate local`.",
)
@click.option(
    "--base-url",
    "base_urls",
    multiple=True,
    help="An engine's OpenAI base URL (repeat; replaces --replicas).",
)
@click.option(
    "--apps", type=int, default=10, show_default=True, help="Apps, each with its own system prompt."
)
@click.option("--requests-per-app", type=int, default=24, show_default=True)
@click.option("--system-tokens", type=int, default=6000, show_default=True)
@click.option("--user-tokens", type=int, default=40, show_default=True)
@click.option("--max-tokens", type=int, default=8, show_default=True)
@click.option("--concurrency", type=int, default=8, show_default=True)
@click.option(
    "--cache-prompts",
    type=click.IntRange(1),
    default=4,
    show_default=True,
    help="System prompts each replica's cache holds (local and fake).",
)
@click.option(
    "--epsilon",
    type=click.FloatRange(0, 10),
    default=DEFAULT_EPSILON,
    show_default=True,
    help="Bounded load: at most (1 + ε) × the mean in flight.",
)
@click.option("--policies", default="round-robin,least-loaded,prefix", show_default=True)
@click.option(
    "--threads", type=click.IntRange(1), default=1, show_default=True, help="torch threads per local replica."
)
@click.option("--seed", type=int, default=7, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the JSON result only.")
def bench_route_command(
    n,
    fake,
    base_urls,
    apps,
    requests_per_app,
    system_tokens,
    user_tokens,
    max_tokens,
    concurrency,
    cache_prompts,
    epsilon,
    policies,
    threads,
    seed,
    as_json,
) -> None:
    """Cached tokens, TTFT and load spread of round robin, least-loaded and prefix routing."""
    try:
        w = RouteWorkload(apps, requests_per_app, system_tokens, user_tokens, max_tokens, concurrency, seed)
        if base_urls and fake:
            raise ValueError("--fake and --base-url exclude each other")
        mode = "base-url" if base_urls else "fake" if fake else "local"
        if mode == "base-url":
            normalised_urls(list(base_urls), "--base-url")
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    result = run_bench(w, n, mode, list(base_urls), _policies(policies), cache_prompts, epsilon, threads)
    if as_json:
        click.echo(json.dumps(result, indent=1))
    else:
        click.echo(
            json.dumps(
                {k: v for k, v in result.items() if k != "runs"}
                | {
                    "runs": {
                        p: {
                            k: v
                            for k, v in r.items()
                            if k not in ("pool", "app_cacheable_tokens", "app_requests")
                        }
                        for p, r in result["runs"].items()
                    }
                },
                indent=1,
            )
        )
        print_table(result)


if __name__ == "__main__":  # until phase 2 registers `prefixgate bench route` in proxy/cli.py
    bench_route_command()
