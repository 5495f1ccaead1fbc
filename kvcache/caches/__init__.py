"""KV caches: contiguous, sliding-window (rolling buffer), int8 (per-token/head scales), paged
(prefix-shared; its pool in full precision or int8).

All implement ``kvcache.caches.base.KVCache``; the paged one is made by ``BlockPool.sequence``. Nothing
here runs a model.
"""

from __future__ import annotations

from kvcache.caches.base import KVCache
from kvcache.caches.contiguous import ContiguousCache
from kvcache.caches.paged import BlockPool, PagedCache
from kvcache.caches.quantized import Int8BlockPool, Int8Cache
from kvcache.caches.sliding import SlidingWindowCache

__all__ = [
    "BlockPool",
    "ContiguousCache",
    "Int8BlockPool",
    "Int8Cache",
    "KVCache",
    "PagedCache",
    "SlidingWindowCache",
]
