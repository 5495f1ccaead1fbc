"""The simple cache the seeds describe: one preallocated K and V tensor per model, grown token by token.

Storage is ``[layers, kv_heads, head_dim, capacity]`` for K and for V (``k`` and ``v``: views of one
``[layers, 2 · kv_heads, head_dim, capacity]`` buffer, so ``update_kv`` stores a token's K and V in one
copy), so its size is exactly 2 · L · H_kv · d · capacity · bytes. Tokens are the innermost (contiguous)
axis, which a decode step's attention matmuls read about twice as fast at 4k tokens as the token-major
layout (docs/engine.md). ``update`` still hands back ``[kv_heads, tokens, head_dim]`` views (no copy).
It does not share anything between sequences (see ``paged``) and it does not evict (see ``sliding``).
"""

from __future__ import annotations

import torch

from kvcache.caches.base import KVCache
from kvcache.config import ModelConfig
from kvcache.utils import hugepages


class ContiguousCache(KVCache):
    def __init__(self, config: ModelConfig, capacity: int, dtype: torch.dtype = torch.float32):
        super().__init__(config, capacity)
        kv_heads = config.num_kv_heads
        # one buffer: each layer's K heads, then its V heads
        self.kv = hugepages.empty((config.num_layers, 2 * kv_heads, config.head_dim, capacity), dtype)
        self.k, self.v = self.kv[:, :kv_heads], self.kv[:, kv_heads:]
        self.positions = torch.arange(capacity)
        self._visible = self._new = self.positions[:0]  # every token the current pass sees; its new ones
        self.bytes_per_value = self.k.element_size()
        # [2·H_kv, capacity, d] views of each layer, made once (token-major indexing over token-minor storage)
        self._layers = [self.kv[i].transpose(1, 2) for i in range(config.num_layers)]

    def begin(self, token_ids: list[int]) -> torch.Tensor:
        self._reserve(len(token_ids))
        self._visible = self.positions[: self.length + len(token_ids)]
        self._new = self.positions[self.length : self.length + len(token_ids)]  # views: no arange per step
        return self._new

    def update(
        self, layer: int, k: torch.Tensor, v: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        start, end, kv_heads = self.length, self.length + k.shape[1], k.shape[0]
        stored = self._layers[layer].narrow(1, 0, end)
        stored.narrow(1, start, end - start).copy_(torch.cat((k, v)))
        keys, values = stored.split_with_sizes((kv_heads, kv_heads))
        return keys, values, self._visible

    def update_kv(self, layer: int, kv: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        stored = self._layers[layer].index_copy_(1, self._new, kv)
        keys, values = stored.narrow(1, 0, self._visible.shape[0]).split_with_sizes((kv.shape[0] // 2,) * 2)
        return keys, values, self._visible

    @property
    def nbytes(self) -> int:
        return self.k.nbytes + self.v.nbytes
