"""Sliding-window cache: a rolling buffer holding only the last ``window`` tokens' keys and values.

Memory stays 2 · L · H_kv · d · window · bytes however long the sequence runs. During a prefill longer
than the window the new tokens are attended to in full (with the window mask) and only the last
``window`` are kept. Use it only for models whose every layer uses the same window (Mistral); it does not
apply the window mask itself (the attention layer masks by position).
"""

from __future__ import annotations

import torch

from kvcache.caches.base import KVCache
from kvcache.config import ModelConfig
from kvcache.errors import UnsupportedModelError


class SlidingWindowCache(KVCache):
    def __init__(
        self,
        config: ModelConfig,
        capacity: int,
        dtype: torch.dtype = torch.float32,
        window: int | None = None,
    ):
        super().__init__(config, capacity)
        window = window or config.sliding_window
        if window is None:
            raise UnsupportedModelError(
                "a sliding-window cache needs a model whose layers all use one sliding window"
            )
        self.window = window
        shape = (config.num_layers, config.num_kv_heads, window, config.head_dim)
        self.k = torch.empty(shape, dtype=dtype)
        self.v = torch.empty(shape, dtype=dtype)
        self.slot_positions = torch.full((window,), -1, dtype=torch.long)  # -1: empty slot
        self.bytes_per_value = self.k.element_size()

    def update(
        self, layer: int, k: torch.Tensor, v: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        count = k.shape[1]
        new_positions = torch.arange(self.length, self.length + count)
        filled = min(self.length, self.window)
        # Slots in use hold positions [length - filled, length); their order in the buffer is irrelevant
        # because attention is a masked sum over positions.
        keys = torch.cat((self.k[layer, :, :filled], k), dim=1)
        values = torch.cat((self.v[layer, :, :filled], v), dim=1)
        positions = torch.cat((self.slot_positions[:filled], new_positions))
        self._store(layer, k, v, new_positions)
        return keys, values, positions

    def _store(self, layer: int, k: torch.Tensor, v: torch.Tensor, new_positions: torch.Tensor) -> None:
        keep = min(k.shape[1], self.window)
        slots = new_positions[-keep:] % self.window
        self.k[layer, :, slots] = k[:, -keep:]
        self.v[layer, :, slots] = v[:, -keep:]
        if layer == self.config.num_layers - 1:
            self.slot_positions[slots] = new_positions[-keep:]

    @property
    def nbytes(self) -> int:
        return self.k.nbytes + self.v.nbytes
