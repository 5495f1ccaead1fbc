"""KV-cache arithmetic: bytes per token, bytes per conversation, what fits, the decode ceiling.

    bytes = 2 × layers × kv_heads × head_dim × tokens × batch × bytes_per_value

A sliding window caps tokens per sequence; conversations that fit are
``floor((gpu_memory − weights) / bytes_per_conversation)``; the decode ceiling is
``bandwidth / weight_bytes`` (cache reads left out; the figure with them is given beside it).
Presets carry layers, KV heads, head size and nominal parameter count, each naming its ``config.json``.

It does NOT do I/O or parse arguments (see :mod:`analyzer.kv_cli`). See docs/kv.md.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from analyzer.sizes import GIB as GIB  # re-exported: kv.GIB, kv.parse_bytes
from analyzer.sizes import parse_bytes as parse_bytes


@dataclass(frozen=True)
class ModelPreset:
    name: str
    layers: int
    kv_heads: int
    head_dim: int
    query_heads: int
    #: parameters, for the weight size at 16 bits
    params: float
    source: str


PRESETS: dict[str, ModelPreset] = {
    p.name: p
    for p in (
        ModelPreset(
            "llama-3-8b", 32, 8, 128, 32, 8e9, "meta-llama/Meta-Llama-3-8B config.json (nominal 8B params)"
        ),
        ModelPreset(
            "llama-3-70b",
            80,
            8,
            128,
            64,
            70e9,
            "meta-llama/Meta-Llama-3-70B config.json (nominal 70B params)",
        ),
        ModelPreset(
            "llama-3-70b-mha",
            80,
            64,
            128,
            64,
            70e9,
            "seed: Llama 3 70B with one KV head per query head (made up)",
        ),
        ModelPreset("llama-3.1-405b", 126, 8, 128, 128, 405e9, "meta-llama/Llama-3.1-405B config.json"),
        ModelPreset("llama-2-7b", 32, 32, 128, 32, 6.74e9, "meta-llama/Llama-2-7b-hf config.json (full MHA)"),
        ModelPreset("mistral-7b", 32, 8, 128, 32, 7.24e9, "mistralai/Mistral-7B-v0.1 config.json"),
        ModelPreset("qwen2.5-7b", 28, 4, 128, 28, 7.62e9, "Qwen/Qwen2.5-7B config.json"),
        ModelPreset("qwen2.5-72b", 80, 8, 128, 64, 72.7e9, "Qwen/Qwen2.5-72B config.json"),
        ModelPreset("gemma-2-9b", 42, 8, 256, 16, 9.24e9, "google/gemma-2-9b config.json"),
    )
}

ALIASES = {
    "llama3-8b": "llama-3-8b",
    "llama3-70b": "llama-3-70b",
    "llama-3.1-8b": "llama-3-8b",
    "llama-3.1-70b": "llama-3-70b",
    "llama-3-405b": "llama-3.1-405b",
    "mistral-7b-v0.1": "mistral-7b",
}


def find_preset(name: str) -> ModelPreset:
    key = re.sub(r"[\s_]+", "-", name.strip().lower())
    key = ALIASES.get(key, key)
    if key not in PRESETS:
        raise ValueError(f"unknown model {name!r}; known: {', '.join(sorted(PRESETS))}")
    return PRESETS[key]


def parse_tokens(text: str) -> int:
    """'131072', '4,000', '128K' (K = 1,024 tokens, as in "128K context"), '1M' (2²⁰)."""
    raw = text.strip().replace(",", "").replace("_", "")
    m = re.fullmatch(r"(?i)(\d+)([km]?)", raw)
    if not m:
        raise ValueError(f"not a token count: {text!r} (examples: 4000, 128K)")
    return int(m.group(1)) * {"": 1, "k": 1024, "m": 1024**2}[m.group(2).lower()]


@dataclass(frozen=True)
class KVShape:
    layers: int
    kv_heads: int
    head_dim: int
    bits: int = 16

    def __post_init__(self) -> None:
        for name in ("layers", "kv_heads", "head_dim"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.bits not in (16, 8, 4):
            raise ValueError(f"bits must be 16, 8 or 4, got {self.bits}")

    @property
    def bytes_per_token(self) -> int:
        # 2 (K and V) × layers × kv_heads × head_dim × bits/8, kept exact for 4-bit caches.
        return 2 * self.layers * self.kv_heads * self.head_dim * self.bits // 8


def kv_cache_bytes(
    layers: int, kv_heads: int, head_dim: int, tokens: int, batch: int = 1, bytes_per_value: float = 2
) -> float:
    """The seed's formula, term by term."""
    return 2 * layers * kv_heads * head_dim * tokens * batch * bytes_per_value


def cached_tokens(tokens: int, window: int | None) -> int:
    """Tokens whose keys and values are kept: a sliding window caps them."""
    return min(tokens, window) if window else tokens


def conversations_that_fit(gpu_memory: float, weights: float, bytes_per_conversation: float) -> int:
    if bytes_per_conversation <= 0:
        raise ValueError("bytes per conversation must be > 0")
    free = gpu_memory - weights
    return max(0, math.floor(free // bytes_per_conversation))


def decode_ceiling(bandwidth: float, bytes_read_per_step: float) -> float:
    """Tokens per second one sequence can make when each step reads ``bytes_read_per_step``."""
    if bytes_read_per_step <= 0:
        raise ValueError("bytes read per decode step must be > 0")
    return bandwidth / bytes_read_per_step
