"""The simple cache the seeds describe: one preallocated K and V tensor per model, grown token by token.

Storage is ``[layers, kv_heads, head_dim, capacity]`` for K and for V, so its size is exactly
2 · L · H_kv · d · capacity · bytes. Tokens are the innermost (contiguous) axis: a decode step's two
attention matmuls then stream each head's keys and values as long contiguous rows, which measured about
twice as fast at 4k tokens as the token-major ``[…, capacity, head_dim]`` layout. ``update`` still hands
back ``[kv_heads, tokens, head_dim]`` views (no copy). It does not share anything between sequences (see
``paged``) and it does not evict (see ``sliding``).
"""

from __future__ import annotations

import torch

from kvcache import hugepages
from kvcache.caches.base import KVCache
from kvcache.config import ModelConfig


class ContiguousCache(KVCache):
    def __init__(self, config: ModelConfig, capacity: int, dtype: torch.dtype = torch.float32):
        super().__init__(config, capacity)
        shape = (config.num_layers, config.num_kv_heads, config.head_dim, capacity)
        self.k = hugepages.empty(shape, dtype)
        self.v = hugepages.empty(shape, dtype)
        self.positions = torch.arange(capacity)
        self.bytes_per_value = self.k.element_size()
        # [H_kv, capacity, d] views of each layer, made once (token-major indexing over token-minor storage)
        self._layers = [(self.k[i].transpose(1, 2), self.v[i].transpose(1, 2)) for i in range(config.num_layers)]

    def begin(self, token_ids: list[int]) -> torch.Tensor:
        self._reserve(len(token_ids))
        return self.positions[self.length : self.length + len(token_ids)]  # a view: no arange per step

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        start, end = self.length, self.length + k.shape[1]
        layer_k, layer_v = self._layers[layer]
        keys, values = layer_k.narrow(1, 0, end), layer_v.narrow(1, 0, end)
        keys.narrow(1, start, end - start).copy_(k)
        values.narrow(1, start, end - start).copy_(v)
        return keys, values, self.positions[:end]

    @property
    def nbytes(self) -> int:
        return self.k.nbytes + self.v.nbytes
