"""``prefixgate local``: serve a local checkpoint (or the random demo model) over an OpenAI-style API.

Flags: --model PATH (a Hugging Face folder; default: the demo model, built offline on first use),
--host, --port (8000), --device (auto/cpu/cuda), --dtype (auto/fp32/bf16/fp16), --threads, --max-context,
--block-size, --kv-memory, --kv-blocks, --context, --kv-cache (fp/int8), --max-seqs, --max-batched-tokens,
--no-chunked-prefill, --decode-slowdown, --no-prefix-sharing, --no-cuda-graphs. The start banner prints
the pool's arithmetic (bytes per token, blocks, conversations that fit).
Bad input (missing files, unsupported architecture, a dtype the machine cannot run) ends with one clear
line and exit code 1, never a traceback. It does not daemonize or reload.
"""

from __future__ import annotations

import click

from kvcache.errors import EngineError


@click.command("local")
@click.option(
    "--model",
    "model_path",
    type=click.Path(),
    default=None,
    help="Hugging Face checkpoint folder (config.json, *.safetensors, tokenizer.json). Default: the random demo model.",
)
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535))
@click.option(
    "--device",
    default="auto",
    show_default=True,
    help="auto (CUDA when present), cpu, cuda or cuda:N. --device cuda without CUDA is an error.",
)
@click.option(
    "--dtype",
    default="auto",
    show_default=True,
    help="auto (bf16 on CUDA, fp32 on the CPU), fp32, bf16 or fp16; one the device cannot run is an error.",
)
@click.option(
    "--threads",
    type=click.IntRange(min=1),
    default=None,
    help="torch threads (default: CPU cores, at most 8).",
)
@click.option(
    "--max-context",
    type=click.IntRange(min=2),
    default=None,
    help="Cap the context (tokens); default: the model's.",
)
@click.option(
    "--block-size", type=click.IntRange(min=1), default=16, show_default=True, help="Tokens per KV block."
)
@click.option(
    "--kv-memory",
    metavar="SIZE|FRACTION",
    default=None,
    help="The KV pool's memory: a size (40GiB, 16GB) or a fraction of the memory free once the model is "
    "loaded (0.8, 80%). Default: 0.8 of free memory on CUDA; 4 contexts, at most 2 GiB, on the CPU.",
)
@click.option(
    "--kv-blocks",
    type=click.IntRange(min=1),
    default=None,
    help="Blocks in the shared KV pool, at least one context (instead of --kv-memory).",
)
@click.option(
    "--context",
    "banner_context",
    metavar="TOKENS",
    default=None,
    help="Conversation length the start banner counts (4096, 8K; default: the context).",
)
@click.option(
    "--kv-cache",
    type=click.Choice(["fp", "int8"]),
    default="fp",
    show_default=True,
    help="KV pool storage: the model's dtype, or int8 with one scale per token and head (half of fp16).",
)
@click.option(
    "--max-seqs",
    type=click.IntRange(min=1),
    default=16,
    show_default=True,
    help="Sequences decoding together.",
)
@click.option(
    "--max-batched-tokens",
    type=click.IntRange(min=1),
    default=512,
    show_default=True,
    help="Tokens per engine step (decodes plus prompt chunks); at least --max-seqs.",
)
@click.option(
    "--no-chunked-prefill",
    is_flag=True,
    help="Prefill each prompt whole in a step of its own (stalls other streams).",
)
@click.option(
    "--decode-slowdown",
    type=click.FloatRange(min=0),
    default=2.0,
    show_default=True,
    help="While streams decode, cap prompt chunks so a step takes at most this × a decode-only step "
    "(measured; 0: no cap, chunks up to --max-batched-tokens).",
)
@click.option("--no-prefix-sharing", is_flag=True, help="Never reuse cached prompt-prefix blocks.")
@click.option("--no-cuda-graphs", is_flag=True, help="On CUDA, run decode steps eagerly (no graph capture).")
def local_command(
    model_path: str | None,
    host: str,
    port: int,
    device: str,
    dtype: str,
    threads: int | None,
    max_context: int | None,
    block_size: int,
    kv_memory: str | None,
    kv_blocks: int | None,
    banner_context: str | None,
    kv_cache: str,
    max_seqs: int,
    max_batched_tokens: int,
    no_chunked_prefill: bool,
    decode_slowdown: float,
    no_prefix_sharing: bool,
    no_cuda_graphs: bool,
) -> None:
    """Serve a local Llama/Mistral/Qwen2 model with a paged, prefix-shared KV cache (OpenAI-compatible API)."""
    import uvicorn

    from analyzer.kv import parse_tokens
    from kvcache.engine.engine import Engine, EngineConfig
    from kvcache.server.app import create_app

    try:
        config = EngineConfig(
            model_path=model_path,
            device=device,
            dtype=dtype,
            threads=threads,
            max_context=max_context,
            block_size=block_size,
            kv_blocks=kv_blocks,
            kv_memory=kv_memory,
            context=parse_tokens(banner_context) if banner_context else None,
            kv_cache=kv_cache,
            max_seqs=max_seqs,
            max_batched_tokens=max_batched_tokens,
            chunked_prefill=not no_chunked_prefill,
            decode_slowdown=decode_slowdown,
            prefix_sharing=not no_prefix_sharing,
            cuda_graphs=not no_cuda_graphs,
        )
        if model_path is None:
            click.echo("no --model given: using the demo model (building it offline on first use)", err=True)
        engine = Engine(config)
    except (
        EngineError,
        ValueError,
        OSError,
    ) as exc:  # OSError: e.g. the demo model's cache folder is read-only
        raise click.ClickException(str(exc)) from None
    if engine.notice:
        click.echo(f"NOTE: {engine.notice}", err=True)
    click.echo(f"loaded {engine.describe()}", err=True)
    click.echo(engine.banner(), err=True)
    click.echo(
        f"serving on http://{host}:{port}/v1 (chat/completions, completions, responses, models; /metrics)",
        err=True,
    )
    uvicorn.run(create_app(engine), host=host, port=port, log_level="warning")


if __name__ == "__main__":  # ``python -m kvcache.server.cli``: what ``prefixgate bench server`` starts
    local_command()
