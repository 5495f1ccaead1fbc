"""One token for each of B rows over the paged pool, in tensors whose shapes and addresses never change.

``PaddedDecode`` stands where a ``KVCache`` stands in the layer API, for a step of decodes only: each
layer's ``attend`` writes the rows' new K/V at ``write_slots``, gathers each row's ``key_slots [B, n]``
(padded with the pool's pad slot) and runs torch's fused attention (SDPA) with the query heads grouped
per KV head and a bias of -inf on padding and outside a sliding window (from ``counts``). Nothing reads a
value back to the host, so a CUDA graph captures it (``engine.graphs``). Padding rows (to a batch size of
the graph ladder) write to the pad slot and see only it. It does not fill the tensors (``engine.graphs``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F

if TYPE_CHECKING:  # annotations only
    from kvcache.caches.paged import BlockPool

NEG_INF = float("-inf")


@dataclass
class PaddedDecode:
    pool: BlockPool
    write_slots: torch.Tensor  # [B] long
    key_slots: torch.Tensor  # [B, n] long, each row's visible keys from its window's start, then padding
    counts: torch.Tensor  # [B] long: how many of a row's key slots it sees (>= 1)
    _bias: dict[int | None, torch.Tensor] = field(default_factory=dict, init=False, repr=False)

    def begin(self) -> None:
        """Start a pass: biases are made again from ``counts`` (inside a captured graph: on every replay)."""
        self._bias = {}

    def bias(self, window: int | None) -> torch.Tensor:
        """[B, 1, 1, n] in the pool's dtype: 0 where the row sees the key, -inf elsewhere."""
        bias = self._bias.get(window)
        if bias is None:
            column = torch.arange(self.key_slots.shape[1], device=self.key_slots.device).view(1, -1)
            counts = self.counts.view(-1, 1)
            visible = column < counts
            if window is not None:  # the row's query is its last key
                visible &= column > counts - 1 - window
            zeros = torch.zeros(visible.shape, dtype=self.pool.dtype, device=visible.device)
            bias = self._bias[window] = zeros.masked_fill_(~visible, NEG_INF)[:, None, None, :]
        return bias

    def advance(self) -> None:
        """The model's end-of-pass hook: nothing to do."""

    def attend(self, layer, q, k, v, positions, window, scale) -> torch.Tensor:
        """q [H, B, d], k/v [H_kv, B, d] → [H, B, d]."""
        heads, batch, d = q.shape
        kv_heads = k.shape[0]
        self.pool.write(layer, self.write_slots, torch.cat((k, v)))
        width = self.key_slots.shape[1]
        stored = self.pool.gather(layer, self.key_slots.view(-1)).view(2 * kv_heads, batch, width, d)
        keys, values = stored[:kv_heads].transpose(0, 1), stored[kv_heads:].transpose(0, 1)  # [B, H_kv, n, d]
        grouped = q.reshape(kv_heads, heads // kv_heads, batch, d).permute(2, 0, 1, 3)  # [B, H_kv, group, d]
        out = F.scaled_dot_product_attention(grouped, keys, values, attn_mask=self.bias(window), scale=scale)
        return out.permute(1, 2, 0, 3).reshape(heads, batch, d)
