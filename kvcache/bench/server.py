"""``prefixgate bench server``: many users on one model, through the official ``openai`` SDK.

One run, side by side, the same threads for every server (``prefixgate local`` processes on loopback):
``--streams`` streams one after another, then all at once (continuous batching); time to first token
cold and warm with a shared system prompt, with and without prefix sharing; the inter-token latency of a
running stream while a long prompt is prefilled, with and without chunked prefill. Each is described in
docs/engine.md; the measurements are in ``server_runs``. It reports the numbers; it asserts nothing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from kvcache.bench import server_runs as runs
from kvcache.bench.runs import prompt_of


def _texts(tokenizer, vocab: int, sizes: list[int], offset: int = 0) -> list[str]:
    """Distinct real-text pieces of about ``sizes[i]`` tokens each (consecutive, never overlapping)."""
    source = prompt_of(tokenizer, vocab, offset + sum(sizes) + 64)
    out, at = [], offset
    for size in sizes:
        out.append(tokenizer.decode(source[at : at + size]))
        at += size
    return out


def run_bench(
    model_path: str | None,
    threads: int,
    streams: int,
    new_tokens: int,
    system_tokens: int,
    turn_tokens: int,
    long_prompt_tokens: int,
    rounds: int,
    port: int,
    repeats: int = 3,
) -> dict:
    import torch

    from kvcache.config import ModelConfig
    from kvcache.demo import DEMO_NOTICE, ensure_demo_model
    from kvcache.utils.tokenizer import ChatTokenizer

    folder = Path(model_path).expanduser() if model_path else ensure_demo_model()
    tokenizer = ChatTokenizer.from_folder(folder)
    vocab = ModelConfig.from_folder(folder).vocab_size
    stream_prompts = _texts(tokenizer, vocab, [24 + 4 * i for i in range(streams)])
    systems = _texts(tokenizer, vocab, [system_tokens] * rounds, offset=1000)
    turns = _texts(tokenizer, vocab, [turn_tokens] * (2 * rounds + 2), offset=1000 + system_tokens * rounds)
    gen = torch.Generator().manual_seed(7)
    long_prompts = [torch.randint(4, vocab, (long_prompt_tokens,), generator=gen).tolist() for _ in range(2)]
    itl_prompt = tokenizer.encode(stream_prompts[0])
    model = str(folder) if model_path else None
    result: dict = {"model": folder.name, "demo": model_path is None, "threads": threads, "streams": streams}
    result["cpu_cores"] = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if model_path is None:
        result["notice"] = DEMO_NOTICE
    with runs.local_server(model, threads, [], port) as url:
        s = runs.streams(url, stream_prompts, new_tokens, repeats)
        t = runs.ttft(url, systems, turns)
        chunked = runs.itl(url, itl_prompt, long_prompts[0], idle_tokens=64)
    with runs.local_server(model, threads, ["--no-prefix-sharing"], port) as url:
        unshared = runs.ttft(url, systems, turns)
    with runs.local_server(model, threads, ["--no-chunked-prefill"], port) as url:
        unchunked = runs.itl(url, itl_prompt, long_prompts[1], idle_tokens=64)
    result |= {
        "new_tokens": new_tokens,
        "sequential_tokens_per_s": s["sequential_tokens_per_s"],
        "batched_tokens_per_s": s["batched_tokens_per_s"],
        "speedup": s["batched_tokens_per_s"] / s["sequential_tokens_per_s"],
        "identical": s["identical"],
        "sequential_tokens": s["sequential_tokens"],
        "batched_tokens": s["batched_tokens"],
        "repeats": repeats,
        "sequential_runs_tokens_per_s": s["sequential_runs"],
        "batched_runs_tokens_per_s": s["batched_runs"],
        "system_prompt_tokens": system_tokens,
        "turn_tokens": turn_tokens,
        "rounds": rounds,
        "cold_ttft_s": t["cold_ttft_s"],
        "warm_ttft_s": t["warm_ttft_s"],
        "warm_over_cold": t["warm_ttft_s"] / t["cold_ttft_s"],
        "no_sharing_cold_ttft_s": unshared["cold_ttft_s"],
        "no_sharing_warm_ttft_s": unshared["warm_ttft_s"],
        "long_prompt_tokens": long_prompt_tokens,
        "itl_p50_idle_s": chunked["itl_p50_idle_s"],
        "itl_p99_idle_s": chunked["itl_p99_idle_s"],
        "itl_p50_during_prefill_s": chunked["itl_p50_during_prefill_s"],
        "itl_p99_during_prefill_s": chunked["itl_p99_during_prefill_s"],
        "itl_max_during_prefill_s": chunked["itl_max_during_prefill_s"],
        "long_prompt_s": chunked["long_prompt_s"],
        "unchunked_itl_p99_idle_s": unchunked["itl_p99_idle_s"],
        "unchunked_itl_p99_during_prefill_s": unchunked["itl_p99_during_prefill_s"],
        "unchunked_itl_max_during_prefill_s": unchunked["itl_max_during_prefill_s"],
        "unchunked_long_prompt_s": unchunked["long_prompt_s"],
    }
    return result


def _ms(value) -> str:
    return "—" if value is None else f"{value * 1000:.1f}"


def print_table(r: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if r.get("notice"):
        console.print(f"[yellow]{r['notice']}[/]")
    first = Table(
        title=f"{r['streams']} greedy streams of {r['new_tokens']} tokens, {r['model']}, {r['threads']} thread(s), "
        f"best of {r['repeats']} alternated rounds"
    )
    for col in ("one after another tok/s", "all at once tok/s", "speed-up", "identical text"):
        first.add_column(col, justify="right")
    first.add_row(
        f"{r['sequential_tokens_per_s']:.1f}",
        f"{r['batched_tokens_per_s']:.1f}",
        f"{r['speedup']:.2f}×",
        str(r["identical"]),
    )
    console.print(first)
    second = Table(
        title=f"time to first token, {r['system_prompt_tokens']}-token shared system prompt + {r['turn_tokens']}-token "
        f"turn (median of {r['rounds']})"
    )
    for col in ("server", "cold ms", "warm ms", "warm / cold"):
        second.add_column(col, justify="right")
    second.add_row(
        "prefix sharing", _ms(r["cold_ttft_s"]), _ms(r["warm_ttft_s"]), f"{r['warm_over_cold']:.3f}"
    )
    second.add_row(
        "--no-prefix-sharing",
        _ms(r["no_sharing_cold_ttft_s"]),
        _ms(r["no_sharing_warm_ttft_s"]),
        f"{r['no_sharing_warm_ttft_s'] / r['no_sharing_cold_ttft_s']:.3f}",
    )
    console.print(second)
    third = Table(
        title=f"inter-token latency of a running stream while a {r['long_prompt_tokens']}-token prompt arrives"
    )
    for col in ("server", "idle p99 ms", "during p50 ms", "during p99 ms", "during max ms", "long prompt s"):
        third.add_column(col, justify="right")
    third.add_row(
        "chunked",
        _ms(r["itl_p99_idle_s"]),
        _ms(r["itl_p50_during_prefill_s"]),
        _ms(r["itl_p99_during_prefill_s"]),
        _ms(r["itl_max_during_prefill_s"]),
        f"{r['long_prompt_s']:.2f}",
    )
    third.add_row(
        "unchunked",
        _ms(r["unchunked_itl_p99_idle_s"]),
        "—",
        _ms(r["unchunked_itl_p99_during_prefill_s"]),
        _ms(r["unchunked_itl_max_during_prefill_s"]),
        f"{r['unchunked_long_prompt_s']:.2f}",
    )
    console.print(third)


@click.command("server")
@click.option(
    "--model",
    "model_path",
    type=click.Path(),
    default=None,
    help="Checkpoint folder (default: the demo model).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of tables.")
@click.option(
    "--threads",
    type=click.IntRange(min=1),
    default=None,
    help="torch threads of every server (default: the CPU cores).",
)
@click.option("--streams", type=click.IntRange(min=1), default=8, show_default=True)
@click.option("--new-tokens", type=click.IntRange(min=2), default=64, show_default=True)
@click.option("--system-tokens", type=click.IntRange(min=16), default=2000, show_default=True)
@click.option("--turn-tokens", type=click.IntRange(min=1), default=50, show_default=True)
@click.option("--long-prompt-tokens", type=click.IntRange(min=16), default=4096, show_default=True)
@click.option(
    "--rounds", type=click.IntRange(min=1), default=3, show_default=True, help="Cold/warm pairs (medians)."
)
@click.option(
    "--repeats",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Rounds of one-by-one and all-at-once streams, alternated (the best of each counts).",
)
@click.option(
    "--port", type=click.IntRange(1, 65535), default=8791, show_default=True, help="Where the servers listen."
)
def bench_server_command(
    model_path,
    as_json,
    threads,
    streams,
    new_tokens,
    system_tokens,
    turn_tokens,
    long_prompt_tokens,
    rounds,
    repeats,
    port,
) -> None:
    """Continuous batching, prefix sharing and chunked prefill, measured through the openai SDK."""
    from kvcache.engine.engine import default_threads

    try:
        result = run_bench(
            model_path,
            threads or default_threads(),
            streams,
            new_tokens,
            system_tokens,
            turn_tokens,
            long_prompt_tokens,
            rounds,
            port,
            repeats,
        )
    except RuntimeError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        print_table(result)
