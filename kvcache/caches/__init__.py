"""KV caches: contiguous, sliding-window (rolling buffer), int8 (per-token/head scales), paged (prefix-shared).

All implement ``kvcache.caches.base.KVCache``; ``make_cache`` picks one by name. Nothing here runs a model.
"""

from __future__ import annotations

import torch

from kvcache.caches.base import KVCache
from kvcache.caches.contiguous import ContiguousCache
from kvcache.caches.paged import BlockPool, PagedCache
from kvcache.caches.quantized import Int8Cache
from kvcache.caches.sliding import SlidingWindowCache
from kvcache.config import ModelConfig

CACHE_KINDS = ("contiguous", "sliding", "int8")


def make_cache(kind: str, config: ModelConfig, capacity: int, dtype: torch.dtype) -> KVCache:
    if kind == "contiguous":
        return ContiguousCache(config, capacity, dtype)
    if kind == "sliding":
        return SlidingWindowCache(config, capacity, dtype)
    if kind == "int8":
        return Int8Cache(config, capacity, dtype)
    raise ValueError(f"unknown cache kind {kind!r} (choose from {', '.join(CACHE_KINDS)}; paged: BlockPool)")


__all__ = [
    "BlockPool",
    "CACHE_KINDS",
    "ContiguousCache",
    "Int8Cache",
    "KVCache",
    "PagedCache",
    "SlidingWindowCache",
    "make_cache",
]
