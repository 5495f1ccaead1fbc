"""What one engine step hands the network: its rows of tokens, their positions, and how each row attends.

``StepContext`` stands where a ``KVCache`` stands in the layer API: each layer calls ``attend`` with q/k/v
for every row; it writes every row's new K/V into the pool first (a block another row of the same step
fills is then already there when it is read), then attends through each row's pool slots: the one-token
rows together (gathered, padded, ``attention.attend_padded``), each longer prompt chunk on its own
(``attention.attend``, masked by absolute positions). ``update_kv`` is the decode fast path for a step of
one token. It holds tensors and pool slots only: it knows no sequences, chunks or scheduler (the engine's
``step_batch`` builds it). The design and its measurements: docs/engine.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import torch

from kvcache.layers.attention import attend, attend_padded

if TYPE_CHECKING:  # annotations only
    from kvcache.caches.paged import BlockPool
    from kvcache.layers.decoder import DecodeBuffers

NEG_INF = float("-inf")


@dataclass
class Rows:
    """``count`` rows of one sequence at positions ``start`` …; their queries see the keys at the pool slots
    ``key_slots``, positions ``first`` … (``first`` > 0 behind a sliding window). ``copy``: a prompt's
    contiguous K/V ``[layers, 2 · kv_heads, tokens, head_dim]`` kept between its chunks, when it has one."""

    start: int
    count: int
    key_slots: torch.Tensor
    first: int = 0
    copy: torch.Tensor | None = None


@dataclass
class StepContext:
    """``singles``: the one-token rows, first in the step; ``chunks``: then each prompt chunk of several
    tokens. ``logit_rows``: the rows whose logits the step returns (those that sample), in order."""

    token_ids: list[int]
    positions: torch.Tensor
    write_slots: torch.Tensor  # the pool slot of each row's new K/V
    logit_rows: torch.Tensor
    pool: BlockPool
    singles: list[Rows]
    chunks: list[Rows]
    decode_buffers: DecodeBuffers | None = None  # the model's one-token scratch, kept by the runner
    max_position: int | None = None  # the largest position, known on the host (no device read to check it)
    _index: torch.Tensor | None = field(default=None, init=False, repr=False)
    _counts: torch.Tensor | None = field(default=None, init=False, repr=False)
    _bias: dict[int | None, torch.Tensor] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.singles:  # every one-token row's key slots, padded with the pool's zero slot
            counts = [r.key_slots.shape[0] for r in self.singles]
            self._index = torch.full((len(self.singles), max(counts)), self.pool.pad_slot, dtype=torch.long)
            for i, r in enumerate(self.singles):
                self._index[i, : counts[i]] = r.key_slots
            self._index = self._index.to(self.pool.device)
            self._counts = torch.tensor(counts).view(-1, 1).to(self.pool.device)

    def __len__(self) -> int:
        return len(self.token_ids)

    def advance(self) -> None:
        """The model's end-of-pass hook: nothing to do (the engine counts computed tokens)."""

    def _padding_bias(self, window: int | None) -> torch.Tensor:
        """[B, n]: 0 where a one-token row sees the key, -inf on padding and outside the window."""
        bias = self._bias.get(window)
        if bias is None:
            column = torch.arange(self._index.shape[1], device=self._index.device).view(1, -1)
            visible = column < self._counts
            if window is not None:  # the row's query is its last key: position first + count - 1
                visible &= column > self._counts - 1 - window
            bias = self._bias[window] = torch.zeros(
                visible.shape, dtype=self.pool.dtype, device=visible.device
            ).masked_fill_(~visible, NEG_INF)
        return bias

    def attend(self, layer, q, k, v, positions, window, scale) -> torch.Tensor:
        """q [H, T, d], k/v [H_kv, T, d] for every row → [H, T, d]."""
        kv_heads = k.shape[0]
        self.pool.write(layer, self.write_slots, torch.cat((k, v)))
        parts, row = [], 0
        if self.singles:
            batch, width = self._index.shape
            stored = self.pool.gather(layer, self._index.view(-1)).view(2 * kv_heads, batch, width, -1)
            bias = self._padding_bias(window)
            parts.append(attend_padded(q[:, :batch], stored[:kv_heads], stored[kv_heads:], bias, scale))
            row = batch
        for chunk in self.chunks:
            rows, first, copy = slice(row, row + chunk.count), chunk.first, chunk.copy
            end = chunk.start + chunk.count
            if copy is not None:  # append this chunk's K/V as stored, read the history as a view
                copy[layer, :, chunk.start : end] = self.pool.gather(
                    layer, chunk.key_slots[chunk.start - first :]
                )
                keys, values = copy[layer, :kv_heads, first:end], copy[layer, kv_heads:, first:end]
            elif chunk.start == 0:  # a first chunk: its own fresh K/V, exact even in an int8 pool
                keys, values, first = k[:, rows], v[:, rows], 0
            else:
                stored = self.pool.gather(layer, chunk.key_slots)
                keys, values = stored[:kv_heads], stored[kv_heads:]
            key_pos = torch.arange(first, first + keys.shape[1], device=positions.device)
            parts.append(attend(q[:, rows], keys, values, positions[rows], key_pos, window, scale))
            row += chunk.count
        return parts[0] if len(parts) == 1 else torch.cat(parts, dim=1)

    def update_kv(self, layer: int, kv: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The decode fast path (a step of one token): store it, return its sequence's keys and values."""
        self.pool.write(layer, self.write_slots, kv)
        only = self.singles[0]
        stored = self.pool.gather(layer, only.key_slots)
        keys, values = stored.split_with_sizes((kv.shape[0] // 2,) * 2)
        return keys, values, torch.arange(only.first, only.first + keys.shape[1])
