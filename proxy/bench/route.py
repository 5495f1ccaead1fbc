"""``prefixgate bench route``: round robin vs least-loaded vs prefix routing over several engines.

N ``prefixgate local`` replicas (the demo model, each KV pool holding about ``--cache-prompts``
system prompts; the default when torch is installed), N fake engines with as small a cache
(``--fake``, :mod:`.route_replica`; the default without torch), or the engines at ``--base-url``;
K apps with distinct system prompts in random order (:mod:`.route_workload`), each policy in turn
through a ``prefixgate serve`` child whose ``[[upstream]]`` lists the replicas (:mod:`.route_run`),
``--kill-at`` stopping one replica mid-run. Per policy: cached share, share of the ideal, TTFT
p50 / p99, throughput and load spread; then the issue's aims. It reports; it asserts nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import math
import signal
import subprocess
from pathlib import Path
from tempfile import TemporaryDirectory

import click
import httpx

from proxy.bench.procs import Child, children, free_ports, serve_child, start, stop, wait_ready
from proxy.bench.route_replica import MODEL as FAKE_MODEL
from proxy.bench.route_report import add_ideal, aims, print_table
from proxy.bench.route_run import pool_config, run_policy
from proxy.bench.route_workload import RouteWorkload
from proxy.replicas.load_share import DEFAULT_EPSILON, POLICIES
from proxy.replicas.replica_set import normalised_urls

LOCAL_TOKENS_PER_ESTIMATE = 1.15  # the demo tokenizer cuts these words into ~1.08 tokens per 4 bytes
SIGNALS = {"term": signal.SIGTERM, "kill": signal.SIGKILL}


def fake_commands(ports: list[int], capacity_tokens: int) -> list[list[str]]:
    return [["--port", str(p), "--capacity-tokens", str(capacity_tokens)] for p in ports]


def local_commands(ports: list[int], w: RouteWorkload, cache_prompts: int, threads: int) -> list[list[str]]:
    per_prompt = math.ceil(w.prompt_tokens() * LOCAL_TOKENS_PER_ESTIMATE) + w.max_tokens
    context = min(8192, per_prompt + 64)
    blocks = max(math.ceil(context / 16), math.ceil((cache_prompts + 0.5) * per_prompt / 16))
    flags = ["--kv-blocks", str(blocks), "--max-context", str(context), "--threads", str(threads)]
    return [["local", "--port", str(p), *flags] for p in ports]


def replica_specs(mode: str, ports: list[int], w: RouteWorkload, cache_prompts: int, threads: int, tmp: Path):
    if mode == "fake":
        args, module = (
            fake_commands(ports, cache_prompts * (w.prompt_tokens() + w.max_tokens)),
            "proxy.bench.route_replica",
        )
    else:
        args, module = local_commands(ports, w, cache_prompts, threads), "proxy.cli"
    return [
        Child(
            a, f"http://127.0.0.1:{p}/v1/models", f"replica {i}", module=module, log=tmp / f"replica-{i}.log"
        )
        for i, (a, p) in enumerate(zip(args, ports))
    ]


def _model_of(url: str) -> str:
    data = httpx.get(f"{url}/models", timeout=10.0, trust_env=False).json().get("data") or [{}]
    model = data[0].get("id")
    if not isinstance(model, str):
        raise click.ClickException(f"{url}/models lists no model")
    return model


class Killer:
    """Stops replica ``victim`` once ``at`` × the requests are done (then restarts it before the
    next policy): a replica that dies mid-run."""

    def __init__(self, procs: list, specs: list[Child], at: float | None, sig: int, total: int) -> None:
        self.procs, self.specs, self.sig = procs, specs, sig
        self.after = None if at is None else max(1, int(at * total))
        self.victim = 0
        self.killed_at: int | None = None

    def __call__(self, done: int) -> None:
        if self.after is not None and self.killed_at is None and done >= self.after:
            self.killed_at = done
            self.procs[self.victim].send_signal(self.sig)

    def revive(self, timeout_s: float) -> None:
        if self.killed_at is None:
            return
        proc = self.procs[self.victim]
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)
        spec = self.specs[self.victim]
        self.procs[self.victim] = start(spec)
        wait_ready(spec.ready_url, self.procs[self.victim], spec.what, timeout_s, spec.log)
        self.killed_at = None


def run_bench(
    w: RouteWorkload,
    n: int,
    mode: str,
    base_urls: list[str],
    policies: list[str],
    cache_prompts: int,
    threads: int,
    kill_at: float | None = None,
    kill_signal: str = "kill",
) -> dict:
    with TemporaryDirectory(prefix="prefixgate-route-") as tmp_name, contextlib.ExitStack() as stack:
        tmp = Path(tmp_name)
        procs: list = []
        specs: list[Child] = []
        if mode == "base-url":
            urls = list(normalised_urls(base_urls, "--base-url"))
        else:
            ports = free_ports(n)
            urls = [f"http://127.0.0.1:{p}/v1" for p in ports]
            specs = replica_specs(mode, ports, w, cache_prompts, threads, tmp)
            procs = list(stack.enter_context(children(specs, 60.0 if mode == "fake" else 600.0)))
            stack.callback(lambda: [stop(p) for p in procs])  # the ones restarted after a kill
        killer = Killer(procs, specs, kill_at if procs else None, SIGNALS[kill_signal], w.requests)
        model = FAKE_MODEL if mode == "fake" else _model_of(urls[0])
        runs = {}
        for policy in policies:
            config = pool_config(tmp / f"{policy}.toml", urls, policy)
            (port,) = free_ports(1)
            with children([serve_child(f"proxy-{policy}", port, None, tmp, config=config)]):
                proxy = f"http://127.0.0.1:{port}"
                runs[policy] = asyncio.run(
                    run_policy(proxy, policy, w, model, killer if killer.after else None)
                )
            if killer.killed_at is not None:
                runs[policy]["killed_after"] = killer.killed_at
                killer.revive(60.0 if mode == "fake" else 600.0)
    add_ideal(runs)
    return {
        "mode": mode,
        "replicas": urls,
        "model": model,
        "cache_prompts": cache_prompts,
        "epsilon": DEFAULT_EPSILON,
        "kill": None if kill_at is None else {"at": kill_at, "signal": kill_signal},
        "workload": w.__dict__,
        "runs": runs,
        "aims": aims(runs),
    }


def _has_torch() -> bool:
    return importlib.util.find_spec("torch") is not None


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
    help="Fake engines with a limited LRU prefix cache (fast) instead of `prefixgate local` "
    "(the default without torch).",
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
    "--kill-at",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=None,
    help="Stop one replica once this share of each policy's requests is done (restarted before the next).",
)
@click.option(
    "--kill-signal",
    type=click.Choice(sorted(SIGNALS)),
    default="kill",
    show_default=True,
    help="kill: it dies (its requests in flight fail); term: it drains them and exits.",
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
    kill_at,
    kill_signal,
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
        mode = "base-url" if base_urls else "fake" if fake or not _has_torch() else "local"
        if mode == "base-url":
            normalised_urls(list(base_urls), "--base-url")
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    result = run_bench(
        w, n, mode, list(base_urls), _policies(policies), cache_prompts, threads, kill_at, kill_signal
    )
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
