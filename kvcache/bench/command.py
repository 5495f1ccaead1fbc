"""``prefixgate bench engine``: the seeds' KV-cache experiment and the engine's speed, as JSON and a table.

One run, side by side, threads pinned for every contender, each timed run warmed up: no cache vs cache
(identical outputs; the speed-up), decode tokens/s of ours and of ``transformers.generate()`` on the same
weights (``--no-transformers`` skips it), prefill and decode tokens/s at contexts 128/1k/4k, and the
achieved memory bandwidth next to the machine's (``runs``). With ``--device`` (or ``--shape``) it runs the
device suite instead (``device_suite``: the engine on a GPU, or small on the CPU). Each is described in
docs/engine.md. It does not assert anything about the numbers; it reports them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import click
import torch

from kvcache.bench import runs as bench_runs
from kvcache.errors import EngineError
from kvcache.utils.dtypes import dtype_name

GB = 1e9


def run_bench(
    model_path: str | None,
    threads: int,
    prompt_tokens: int,
    new_tokens: int,
    contexts: list[int],
    context_new_tokens: int,
    dtype: str,
    compare_transformers: bool,
    bandwidth_mb: int = 512,
    repeats: int = 3,
) -> dict:
    from kvcache.demo import DEMO_NOTICE, ensure_demo_model
    from kvcache.utils.loader import load_model
    from kvcache.utils.tokenizer import ChatTokenizer

    torch.set_num_threads(threads)
    folder = Path(model_path).expanduser() if model_path else ensure_demo_model()
    model = load_model(folder, dtype)
    tokenizer = ChatTokenizer.from_folder(folder) if (folder / "tokenizer.json").is_file() else None
    source = bench_runs.prompt_of(tokenizer, model.config.vocab_size, max(prompt_tokens, 1024))
    prompt = source[:prompt_tokens]
    seed = bench_runs.cache_vs_no_cache(model, prompt, new_tokens)
    hf_model = bench_runs.transformers_model(folder, model.dtype) if compare_transformers else None
    hf_error = hf_model if isinstance(hf_model, str) else None
    side = bench_runs.decode_side_by_side(model, None if hf_error else hf_model, prompt, new_tokens, repeats)
    result: dict = {
        "model": folder.name,
        "demo": model_path is None,
        "dtype": dtype_name(model.dtype),
        "threads": threads,
        "prompt_tokens": prompt_tokens,
        "new_tokens": new_tokens,
        "identical": seed["identical"],
        "no_cache_s": seed["no_cache_s"],
        "cache_s": seed["cache_s"],
        "speedup": seed["speedup"],
        "ttft_s": seed["ttft_s"],
        "prefill_tokens_per_s": seed["prefill_tokens_per_s"],
        "repeats": repeats,
        "decode_tokens_per_s": side["decode_tokens_per_s"],
        "decode_runs": side["runs"],
        "hf_decode_tokens_per_s": None,
        "hf_decode_runs": None,
        "hf_identical": None,
        "decode_vs_hf": None,
        "cpu_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
    }
    if model_path is None:
        result["notice"] = DEMO_NOTICE
    if hf_error:
        result["hf_error"] = hf_error
    elif "hf" in side:
        hf = side["hf"]
        result["hf_decode_tokens_per_s"] = hf["decode_tokens_per_s"]
        result["hf_decode_runs"] = side["hf_runs"]
        result["hf_ttft_s"] = hf["ttft_s"]
        result["hf_identical"] = hf["tokens"] == seed["tokens"] == side["tokens"]
        result["decode_vs_hf"] = side["decode_tokens_per_s"] / hf["decode_tokens_per_s"]
    result["contexts"] = bench_runs.context_sweep(model, source, contexts, context_new_tokens, repeats)
    kv_per_token = model.config.kv_bytes_per_token(model.embed.element_size())
    mean_context = prompt_tokens + new_tokens / 2
    bytes_per_token = model.weight_bytes + kv_per_token * mean_context
    measured = bench_runs.memory_bandwidth(bandwidth_mb)
    decode = result["decode_tokens_per_s"]
    l3 = bench_runs.l3_cache_bytes()
    result["bandwidth"] = {
        "weight_bytes": model.weight_bytes,
        "kv_bytes_per_token": kv_per_token,
        "mean_context": mean_context,
        "bytes_read_per_decode_token": bytes_per_token,
        "achieved_gb_per_s": bytes_per_token * decode / GB,
        "measured_copy_gb_per_s": measured / GB,
        "fraction_of_measured": bytes_per_token * decode / measured,
        "ceiling_tokens_per_s": measured / bytes_per_token,
        "l3_bytes": l3,
        "weights_exceed_l3": None if l3 is None else model.weight_bytes > l3,
    }
    return result


def _fmt(value, spec: str = ".1f") -> str:
    return "—" if value is None else format(value, spec)


def print_table(result: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if result.get("notice"):
        console.print(f"[yellow]{result['notice']}[/]")
    seed = Table(
        title=f"KV cache vs none: {result['model']} ({result['dtype']}, {result['threads']} thread(s)), "
        f"{result['prompt_tokens']} prompt + {result['new_tokens']} new tokens, greedy; decode tok/s: best of "
        f"{result['repeats']} alternated runs"
    )
    for col in (
        "no cache s",
        "cache s",
        "speedup",
        "identical",
        "TTFT ms",
        "decode tok/s",
        "transformers tok/s",
        "ours / transformers",
    ):
        seed.add_column(col, justify="right")
    seed.add_row(
        _fmt(result["no_cache_s"], ".2f"),
        _fmt(result["cache_s"], ".2f"),
        _fmt(result["speedup"], ".1f") + "×",
        str(result["identical"]),
        _fmt(result["ttft_s"] * 1000),
        _fmt(result["decode_tokens_per_s"]),
        _fmt(result["hf_decode_tokens_per_s"]),
        "—" if result["decode_vs_hf"] is None else _fmt(result["decode_vs_hf"], ".2f") + "×",
    )
    console.print(seed)
    sweep = Table(
        title=f"Prefill and decode by context (decode: median step, best of {result['repeats']} rounds)"
    )
    for col in ("context", "prefill tok/s", "TTFT ms", "decode tok/s", "mean-step tok/s", "achieved GB/s"):
        sweep.add_column(col, justify="right")
    for row in result["contexts"]:
        if "skipped" in row:
            sweep.add_row(str(row["context"]), row["skipped"], "", "", "", "")
        else:
            sweep.add_row(
                str(row["context"]),
                _fmt(row["prefill_tokens_per_s"]),
                _fmt(row["ttft_s"] * 1000),
                _fmt(row["decode_tokens_per_s"]),
                _fmt(row["decode_tokens_per_s_mean"]),
                _fmt(row["achieved_gb_per_s"], ".2f"),
            )
    console.print(sweep)
    bw = result["bandwidth"]
    console.print(
        f"decode reads {bw['bytes_read_per_decode_token'] / 2**20:.1f} MiB per token (weights "
        f"{bw['weight_bytes'] / 2**20:.1f} MiB + KV at {bw['mean_context']:.0f} tokens): achieved "
        f"{bw['achieved_gb_per_s']:.2f} GB/s vs measured copy bandwidth {bw['measured_copy_gb_per_s']:.2f} GB/s "
        f"({bw['fraction_of_measured'] * 100:.0f}%; ceiling {bw['ceiling_tokens_per_s']:.0f} tok/s); "
        f"weights exceed L3: {bw['weights_exceed_l3']}"
    )


def _contexts(value: str) -> list[int]:
    try:
        contexts = [int(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise click.BadParameter("a comma-separated list of token counts, e.g. 128,1024,4096") from None
    if not contexts or any(c < 1 for c in contexts):
        raise click.BadParameter("context lengths must be positive")
    return contexts


@click.command("engine")
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
    default=1,
    show_default=True,
    help="torch threads, for every contender.",
)
@click.option(
    "--prompt-tokens", type=click.IntRange(min=1), default=None, help="Default 256 (suite: per device)."
)
@click.option(
    "--new-tokens", type=click.IntRange(min=2), default=None, help="Default 256 (suite: per device)."
)
@click.option(
    "--contexts",
    default="128,1024,4096",
    show_default=True,
    help="Context lengths for the prefill/decode sweep.",
)
@click.option(
    "--context-new-tokens",
    type=click.IntRange(min=2),
    default=48,
    show_default=True,
    help="Decode steps per round of a sweep row (--repeats rounds; the best round's median step counts).",
)
@click.option("--dtype", default=None, help="fp32, bf16, fp16 or auto (default: fp32; the suite: auto).")
@click.option("--no-transformers", is_flag=True, help="Skip the transformers.generate() comparison.")
@click.option(
    "--repeats",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Decode runs of ours and of transformers, alternated (the best of each counts); also sweep rounds.",
)
@click.option(
    "--bandwidth-mb",
    type=click.IntRange(min=1),
    default=512,
    show_default=True,
    help="Size of the tensor copied to measure memory bandwidth (well above the L3 cache).",
)
@click.option("--device", default=None, help="Run the device suite on auto, cpu or cuda (docs/engine.md).")
@click.option(
    "--shape", default=None, help="Suite: a random-weight model shape (llama-3-8b, llama-3.2-1b, tiny …)."
)
@click.option("--batches", default=None, help="Suite: batch sizes for aggregate tokens/s, e.g. 1,8,32,64.")
@click.option("--kv-memory", default=None, help="Suite: the KV pool, a size or a fraction of free memory.")
@click.option("--prefix-tokens", type=click.IntRange(min=16), default=None, help="Suite: the shared prefix.")
@click.option("--conversation-tokens", type=click.IntRange(min=1), default=None, help="Suite: pool count.")
@click.option("--no-cuda-graphs", is_flag=True, help="Suite: decode eagerly on CUDA.")
def bench_engine_command(
    model_path: str | None,
    as_json: bool,
    threads: int,
    prompt_tokens: int,
    new_tokens: int,
    contexts: str,
    context_new_tokens: int,
    dtype: str,
    no_transformers: bool,
    repeats: int,
    bandwidth_mb: int,
    device: str | None,
    shape: str | None,
    **suite,  # the device suite's own options: passed on as they are
) -> None:
    """The seeds' experiment (no cache vs cache, identical output) plus prefill/decode speed and bandwidth;
    with --device, the device suite (decode vs the bandwidth ceiling, batching, TTFT, the pool)."""
    if device is not None or shape is not None:
        if model_path:
            raise click.UsageError("the device suite builds a random model of --shape; --model is not used")
        from kvcache.bench import gpu

        argv = gpu.suite_argv(
            device=device or "auto",
            shape=shape,
            threads=threads,
            dtype=dtype,
            prompt_tokens=prompt_tokens,
            new_tokens=new_tokens,
            no_transformers=no_transformers,
            json=as_json,
            **suite,
        )
        if gpu.main(argv):
            raise click.ClickException("the device suite failed (above)")
        return
    try:
        result = run_bench(
            model_path,
            threads,
            prompt_tokens or 256,
            new_tokens or 256,
            _contexts(contexts),
            context_new_tokens,
            dtype or "fp32",
            not no_transformers,
            bandwidth_mb,
            repeats,
        )
    except EngineError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        print_table(result)
