"""``prefixgate kv``: the KV-cache calculator on the command line.

Reads flags (or a ``--model`` preset, which flags override), prints a short table or, with
``--json``, one object with ``bytes_per_token``, ``total_bytes``, ``conversations_that_fit``
and ``decode_tokens_per_s_limit`` when the inputs allow each. Bad flags exit 2 with a
message (click's usage-error contract). The arithmetic lives in :mod:`analyzer.kv`.
"""

from __future__ import annotations

import json
from typing import Any

import click

from analyzer import kv
from analyzer.sizes import GIB, KIB, MIB, parse_bytes


def _fmt_bytes(n: float) -> str:
    if n >= GIB:
        return f"{n / GIB:,.2f} GiB ({n / 1e9:,.2f} GB)"
    if n >= MIB:
        return f"{n / MIB:,.2f} MiB ({n / 1e6:,.2f} MB)"
    return f"{n / KIB:,.2f} KiB" if n >= KIB else f"{n:,.0f} B"


def _positive_size(flag: str, text: str, *, per_second: bool = False) -> float:
    value = parse_bytes(text, per_second=per_second)
    if value <= 0:
        raise ValueError(f"{flag} must be more than 0, got {text!r}")
    return value


def compute(
    *,
    model: str | None,
    layers: int | None,
    kv_heads: int | None,
    head_dim: int | None,
    tokens: str | None,
    batch: int,
    bits: int,
    window: str | None,
    gpu_memory: str | None,
    weights: str | None,
    bandwidth: str | None,
) -> dict[str, Any]:
    """All figures the inputs allow, as a JSON-ready dict. Raises ValueError on bad input."""
    preset = kv.find_preset(model) if model else None
    layers = layers if layers is not None else (preset.layers if preset else None)
    kv_heads = kv_heads if kv_heads is not None else (preset.kv_heads if preset else None)
    head_dim = head_dim if head_dim is not None else (preset.head_dim if preset else None)
    missing = [
        flag
        for flag, v in (("--layers", layers), ("--kv-heads", kv_heads), ("--head-dim", head_dim))
        if v is None
    ]
    if missing:
        raise ValueError(f"missing {', '.join(missing)} (or give --model NAME)")
    if batch < 1:
        raise ValueError(f"--batch must be >= 1, got {batch}")
    shape = kv.KVShape(layers, kv_heads, head_dim, bits)
    out: dict[str, Any] = {
        "model": preset.name if preset else None,
        "source": preset.source if preset else None,
        "layers": layers,
        "kv_heads": kv_heads,
        "head_dim": head_dim,
        "bits": bits,
        "batch": batch,
        "bytes_per_token": shape.bytes_per_token,
    }
    n_tokens = kv.parse_tokens(tokens) if tokens is not None else None
    win = kv.parse_tokens(window) if window is not None else None
    if win is not None and win < 1:
        raise ValueError("--window must be >= 1")
    out["window"] = win
    if n_tokens is not None:
        kept = kv.cached_tokens(n_tokens, win)
        out.update(
            tokens=n_tokens,
            tokens_cached=kept,
            bytes_per_conversation=shape.bytes_per_token * kept,
            total_bytes=shape.bytes_per_token * kept * batch,
        )
    weight_bytes = (
        _positive_size("--weights", weights)
        if weights is not None
        else (preset.params * 2 if preset else None)
    )
    out["weight_bytes"] = weight_bytes
    if gpu_memory is not None:
        gpu = _positive_size("--gpu-memory", gpu_memory)
        out["gpu_memory_bytes"] = gpu
        if weight_bytes is None:
            raise ValueError("--gpu-memory needs the weight size: --weights 16GB or --model NAME")
        if not n_tokens:
            raise ValueError("--gpu-memory needs --tokens of at least 1 (the length of one conversation)")
        if weight_bytes >= gpu:
            raise ValueError(f"the weights ({_fmt_bytes(weight_bytes)}) do not fit in {gpu_memory}")
        out["conversations_that_fit"] = kv.conversations_that_fit(
            gpu, weight_bytes, out["bytes_per_conversation"]
        )
    if bandwidth is not None:
        bw = _positive_size("--bandwidth", bandwidth, per_second=True)
        out["bandwidth_bytes_per_s"] = bw
        if weight_bytes is None:
            raise ValueError("--bandwidth needs the weight size: --weights 16GB or --model NAME")
        out["decode_tokens_per_s_limit"] = kv.decode_ceiling(bw, weight_bytes)
        if n_tokens is not None:  # one step reads the weights and every sequence's cache
            step = weight_bytes + out["total_bytes"]
            out["decode_tokens_per_s_limit_with_cache"] = kv.decode_ceiling(bw, step)
    return out


def render(r: dict[str, Any]) -> str:
    lines = []
    if r["model"]:
        lines.append(f"model                      {r['model']}  ({r['source']})")
    lines.append(
        f"shape                      {r['layers']} layers × {r['kv_heads']} KV heads × {r['head_dim']} head dim, {r['bits']}-bit cache"
    )
    lines.append(f"bytes per token            {r['bytes_per_token']:,} ({_fmt_bytes(r['bytes_per_token'])})")
    if "total_bytes" in r:
        capped = f", window keeps {r['tokens_cached']:,}" if r["tokens_cached"] != r["tokens"] else ""
        lines.append(
            f"per conversation           {r['bytes_per_conversation']:,} B = {_fmt_bytes(r['bytes_per_conversation'])} at {r['tokens']:,} tokens{capped}"
        )
        lines.append(
            f"total (batch {r['batch']})            {r['total_bytes']:,} B = {_fmt_bytes(r['total_bytes'])}"
        )
    if "conversations_that_fit" in r:
        free = r["gpu_memory_bytes"] - r["weight_bytes"]
        lines.append(
            f"conversations that fit     {r['conversations_that_fit']:,} ({_fmt_bytes(free)} free beside {_fmt_bytes(r['weight_bytes'])} of weights)"
        )
    if "decode_tokens_per_s_limit" in r:
        lines.append(
            f"decode ceiling             {r['decode_tokens_per_s_limit']:,.0f} tokens/s per conversation (weights read once per token)"
        )
        if "decode_tokens_per_s_limit_with_cache" in r:
            lines.append(
                f"  with the cache reads     {r['decode_tokens_per_s_limit_with_cache']:,.0f} tokens/s per conversation at batch {r['batch']}"
            )
    return "\n".join(lines)


@click.command("kv")
@click.option(
    "--model",
    "model",
    metavar="NAME",
    help=f"Preset: {', '.join(sorted(kv.PRESETS))}. Flags override its terms.",
)
@click.option("--layers", type=click.IntRange(min=1), help="Transformer layers.")
@click.option("--kv-heads", type=click.IntRange(min=1), help="Heads that keep their own keys and values.")
@click.option("--head-dim", type=click.IntRange(min=1), help="Numbers per key (or value) per head.")
@click.option("--tokens", metavar="N", help="Tokens per conversation (4000, 128K = 131,072).")
@click.option("--batch", type=int, default=1, show_default=True, help="Conversations held at once.")
@click.option(
    "--bits", type=click.Choice(["16", "8", "4"]), default="16", show_default=True, help="Cache precision."
)
@click.option("--window", metavar="N", help="Sliding window: keep at most N tokens per conversation.")
@click.option("--gpu-memory", metavar="SIZE", help="GPU memory, e.g. 80GB (decimal) or 80GiB.")
@click.option("--weights", metavar="SIZE", help="Weight bytes, e.g. 16GB (default: preset params × 2 bytes).")
@click.option("--bandwidth", metavar="RATE", help="Memory bandwidth, e.g. 3.35TB/s.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def kv_command(
    model, layers, kv_heads, head_dim, tokens, batch, bits, window, gpu_memory, weights, bandwidth, as_json
) -> None:
    """KV-cache calculator: 2 × layers × kv_heads × head_dim × tokens × batch × bytes."""
    try:
        result = compute(
            model=model,
            layers=layers,
            kv_heads=kv_heads,
            head_dim=head_dim,
            tokens=tokens,
            batch=batch,
            bits=int(bits),
            window=window,
            gpu_memory=gpu_memory,
            weights=weights,
            bandwidth=bandwidth,
        )
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    click.echo(json.dumps(result, indent=2) if as_json else render(result))
