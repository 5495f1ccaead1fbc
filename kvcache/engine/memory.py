"""How big the paged KV pool is, and the seeds' arithmetic for it, printed at start.

``--kv-memory`` is a size (``40GiB``, ``16GB``: ``analyzer.sizes``) or a fraction of the memory free once
the model is loaded (``0.8``, ``80%``); without it a GPU pool takes ``CUDA_FRACTION`` of free device
memory and a CPU pool keeps its old default (4 contexts, at most 2 GiB; ``--kv-blocks`` still wins).
Bytes per token and conversations that fit come from ``analyzer.kv``, the functions ``prefixgate kv``
uses: ``floor(pool bytes / (bytes per token × tokens kept))``, a sliding window capping the tokens kept.
It does not allocate the pool (``engine``).
"""

from __future__ import annotations

from dataclasses import dataclass

import analyzer.kv as kv
from analyzer.sizes import GIB, MIB, parse_bytes
from kvcache.config import ModelConfig
from kvcache.errors import EngineError

CUDA_FRACTION = 0.8
DEFAULT_CPU_POOL_BYTES = 2 * GIB


def parse_kv_memory(text: str) -> tuple[str, float]:
    """'0.8' or '80%' → ('fraction', 0.8); '40GiB' → ('bytes', 40·2³⁰). A bad value is a ValueError."""
    raw = str(text).strip()
    try:
        if raw.endswith("%"):
            value = float(raw[:-1]) / 100
        else:
            value = float(raw)
            if value > 1:
                raise ValueError
        if not 0 < value <= 1:
            raise ValueError(f"--kv-memory: a fraction must be in (0, 1], got {text!r}")
        return "fraction", value
    except ValueError as exc:
        if "fraction must" in str(exc):
            raise
    size = parse_bytes(raw, hint="a size such as 40GiB or 16GB, or a fraction of free memory such as 0.8")
    if size < 1:
        raise ValueError(f"--kv-memory must be positive, got {text!r}")
    return "bytes", size


@dataclass(frozen=True)
class PoolPlan:
    bytes_per_token: int  # the formula: 2 · layers · kv_heads · head_dim · bytes per value
    side_bytes_per_token: int  # an int8 pool's scales, beside the formula's bytes
    block_size: int
    blocks: int
    context: int  # the conversation length the banner counts
    tokens_kept: int  # of a conversation: the context, or a sliding window
    source: str  # where the size came from, for the banner

    @property
    def tokens(self) -> int:
        return self.blocks * self.block_size

    @property
    def pool_bytes(self) -> int:
        return self.tokens * self.bytes_per_token

    @property
    def conversations(self) -> int:
        return kv.conversations_that_fit(self.pool_bytes, 0, self.bytes_per_token * self.tokens_kept)

    def banner(self) -> str:
        side = f" + {self.side_bytes_per_token} B of scales" if self.side_bytes_per_token else ""
        window = f" (a sliding window keeps {self.tokens_kept:,})" if self.tokens_kept != self.context else ""
        return (
            f"KV pool: {self.bytes_per_token:,} B per token (2 × layers × KV heads × head dim × bytes{side}); "
            f"{_size(self.pool_bytes)} = {self.blocks:,} blocks of {self.block_size} tokens = {self.tokens:,} tokens "
            f"({self.source}); {self.conversations:,} conversations of {self.context:,} tokens fit{window}"
        )


def default_blocks(bytes_per_token: int, max_context: int, block_size: int) -> int:
    """A CPU pool's default: room for 4 contexts (earlier prefixes stay shareable), at most 2 GiB, at least
    one context."""
    per_context = -(-max_context // block_size)
    affordable = DEFAULT_CPU_POOL_BYTES // (bytes_per_token * block_size)
    return max(per_context, min(4 * per_context, affordable))


def _size(n: float) -> str:
    return f"{n / GIB:.2f} GiB" if n >= GIB else f"{n / MIB:.1f} MiB"


def plan_pool(
    config: ModelConfig,
    value_bytes: int,
    block_size: int,
    max_context: int,
    free: int,
    on_gpu: bool,
    kv_memory: str | None = None,
    kv_blocks: int | None = None,
    context: int | None = None,
    side_bytes_per_token: int = 0,
) -> PoolPlan:
    """The pool for ``config``: ``kv_blocks`` if given, else sized from ``kv_memory`` / the defaults over
    ``free`` bytes (free memory now, the model loaded). Fewer blocks than one context is an error."""
    if kv_memory is not None and kv_blocks is not None:
        raise EngineError("give --kv-memory or --kv-blocks, not both")
    per_token = int(
        kv.kv_cache_bytes(config.num_layers, config.num_kv_heads, config.head_dim, 1, 1, value_bytes)
    )
    per_block = (per_token + side_bytes_per_token) * block_size
    if kv_blocks is not None:
        blocks, source = kv_blocks, "--kv-blocks"
    elif kv_memory is not None:
        kind, value = parse_kv_memory(kv_memory)
        budget = value * free if kind == "fraction" else value
        blocks = int(budget // per_block)
        source = f"--kv-memory {kv_memory}" + (f" of {_size(free)} free" if kind == "fraction" else "")
    elif on_gpu:
        blocks = int(CUDA_FRACTION * free // per_block)
        source = f"{CUDA_FRACTION:.0%} of {_size(free)} free device memory"
    else:
        blocks, source = (
            default_blocks(per_token, max_context, block_size),
            "default: 4 contexts, at most 2 GiB",
        )
    if blocks * block_size < max_context and kv_blocks is not None:
        raise EngineError(
            f"--kv-blocks {blocks} × --block-size {block_size} = {blocks * block_size} tokens is "
            f"less than one context ({max_context} tokens); raise --kv-blocks or lower --max-context"
        )
    if blocks * block_size < max_context:
        raise EngineError(
            f"a KV pool of {blocks} blocks × {block_size} tokens = {blocks * block_size} tokens ({source}) is "
            f"less than one context ({max_context} tokens); give --kv-memory more or lower --max-context"
        )
    conversation = min(context or max_context, max_context)
    kept = kv.cached_tokens(conversation, config.sliding_window)
    return PoolPlan(per_token, side_bytes_per_token, block_size, blocks, conversation, kept, source)
