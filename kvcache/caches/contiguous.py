"""The simple cache the seeds describe: one preallocated K and V tensor per model, grown token by token.

Storage is ``[layers, kv_heads, capacity, head_dim]`` for K and for V, so its size is exactly
2 · L · H_kv · d · capacity · bytes. It does not share anything between sequences (see ``paged``) and it
does not evict (see ``sliding``).
"""

from __future__ import annotations

import torch

from kvcache.caches.base import KVCache
from kvcache.config import ModelConfig


class ContiguousCache(KVCache):
    def __init__(self, config: ModelConfig, capacity: int, dtype: torch.dtype = torch.float32):
        super().__init__(config, capacity)
        shape = (config.num_layers, config.num_kv_heads, capacity, config.head_dim)
        self.k = torch.empty(shape, dtype=dtype)
        self.v = torch.empty(shape, dtype=dtype)
        self.positions = torch.arange(capacity)
        self.bytes_per_value = self.k.element_size()

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        start, end = self.length, self.length + k.shape[1]
        self.k[layer, :, start:end] = k
        self.v[layer, :, start:end] = v
        return self.k[layer, :, :end], self.v[layer, :, :end], self.positions[:end]

    @property
    def nbytes(self) -> int:
        return self.k.nbytes + self.v.nbytes
