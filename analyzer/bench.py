"""Benchmark (not a test): generate a large deterministic request log and time ``analyze`` on it.

    prefixgate bench analyze --requests 100000 [--keep /tmp/log.jsonl] [--json]

The log mixes five apps (OpenAI chat and Anthropic messages), each an ~8 KB system prompt,
conversations of 1–6 turns, usage blocks with and without cached tokens, and two kinds of
cache breakers (a clock time at the top of one app's prompt, a request id inside another).
Bodies average ~10 KB. Prints JSON and a table: generation and analysis seconds,
requests/s, MB/s and the process's peak RSS. Targets: 100,000 requests in ≤ 60 s, ≤ 1 GB.
"""

from __future__ import annotations

import json
import os
import random
import resource
import tempfile
import time

import click

from analyzer.logs.cli import run_analysis
from analyzer.logs.config import AnalyzeConfig

WORDS = (
    "policy refund order shipping account invoice warranty return exchange delivery customer support "
    "product catalog price discount subscription renewal cancel upgrade premium standard basic"
).split()


def _prose(rng: random.Random, n_bytes: int) -> str:
    out, size = [], 0
    while size < n_bytes:
        sentence = " ".join(rng.choice(WORDS) for _ in range(12)).capitalize() + "."
        out.append(sentence)
        size += len(sentence) + 1
    return " ".join(out)


def generate(path: str, requests: int, seed: int = 7) -> int:
    rng = random.Random(seed)
    apps = [_prose(random.Random(seed + i), 8000) for i in range(5)]
    written = 0
    t0 = 1_700_000_000.0
    with open(path, "w") as f:
        i = 0
        while i < requests:
            app = rng.randrange(5)
            turns = rng.randint(1, 6)
            system = apps[app]
            if app == 0:
                system = (
                    f"Current time: {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d} UTC. "
                    + system
                )
            if app == 1:
                system = system[:4000] + f" request_id: {rng.getrandbits(48):012x} " + system[4000:]
            history: list[dict] = []
            for turn in range(turns):
                if i >= requests:
                    break
                history.append({"role": "user", "content": _prose(rng, rng.randint(100, 500))})
                prompt_tokens = (len(system) + sum(len(m["content"]) for m in history)) // 4
                cached = 0 if turn == 0 or app in (0, 1) else (prompt_tokens // 2) // 128 * 128
                if app >= 3:
                    body = {
                        "model": "claude-sonnet-4-5",
                        "max_tokens": 512,
                        "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
                        "messages": list(history),
                    }
                    usage = {
                        "input_tokens": prompt_tokens - cached,
                        "cache_read_input_tokens": cached,
                        "output_tokens": 50,
                    }
                    rec = {"ts": t0 + i * 0.2, "request": body, "response": {"usage": usage}}
                else:
                    body = {
                        "model": "gpt-4o",
                        "user": f"u{app}-{i // 7}",
                        "messages": [{"role": "system", "content": system}, *history],
                    }
                    usage = {
                        "prompt_tokens": prompt_tokens,
                        "completion_tokens": 50,
                        "prompt_tokens_details": {"cached_tokens": cached},
                    }
                    rec = {"ts": t0 + i * 0.2, "request": body, "response": {"usage": usage}}
                line = json.dumps(rec) + "\n"
                f.write(line)
                written += len(line)
                history.append({"role": "assistant", "content": _prose(rng, rng.randint(100, 400))})
                i += 1
    return written


@click.command("analyze")
@click.option(
    "--requests",
    default=100_000,
    show_default=True,
    type=click.IntRange(1, 10_000_000),
    help="Requests in the generated log.",
)
@click.option(
    "--keep", default=None, type=click.Path(dir_okay=False), help="Write the generated log here and keep it."
)
@click.option("--json", "as_json", is_flag=True, help="Print only the JSON object (no table).")
def bench_analyze_command(requests: int, keep: str | None, as_json: bool) -> None:
    """Time `prefixgate analyze` on a generated log of REQUESTS requests (~10 KB each)."""
    result = run(requests, keep)
    click.echo(json.dumps(result, indent=2))
    if not as_json:
        for k, v in result.items():
            click.echo(f"{k:<18} {v}")


def run(requests: int, keep: str | None = None) -> dict:
    """Generate the log, analyse it, and return the figures."""
    path = keep or os.path.join(tempfile.mkdtemp(prefix="pg-bench-"), "log.jsonl")
    t = time.perf_counter()
    size = generate(path, requests)
    gen_s = time.perf_counter() - t
    t = time.perf_counter()
    summary, errors = run_analysis([path], AnalyzeConfig(prices=None))
    analyse_s = time.perf_counter() - t
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if not keep:
        os.remove(path)
    return {
        "requests": requests,
        "log_mb": round(size / 1e6, 1),
        "avg_request_kb": round(size / requests / 1e3, 2),
        "generate_s": round(gen_s, 2),
        "analyse_s": round(analyse_s, 2),
        "requests_per_s": round(requests / analyse_s),
        "mb_per_s": round(size / 1e6 / analyse_s, 1),
        "peak_rss_mb": round(rss_mb),
        "tree_nodes": summary["tree_nodes"],
        "forks_found": len(summary["forks"]),
        "errors": len(errors),
        "targets_met": analyse_s <= 60 and rss_mb <= 1024,
    }
