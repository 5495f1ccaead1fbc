"""One engine step over the paged pool: the rows of tokens it computes and how each row attends.

A step holds one token for each decoding sequence and a chunk of tokens for each sequence still in its
prefill. ``StepBatch`` stands where a ``KVCache`` stands in the layer API: each layer calls ``attend`` with
q/k/v for all rows; it writes every row's new K/V into the pool first (so a block another sequence in this
same step is filling is already there when it is read), then attends, reading the pool through each
sequence's block table (``Sequence.slot_map``: the pool slot of each of its positions):

- the one-token rows together: each row's slots gathered, padded to one length with the pool's zero pad
  slot, bias -inf on padding and outside a sliding window (``attention.attend_padded``, three kernels);
- each prompt chunk on its own: its history (or, for a first chunk, its own fresh K/V) through torch's
  fused attention kernel with a causal mask by absolute positions. A prompt prefilled in several chunks
  keeps a contiguous copy of its K/V while it is being prefilled (``Sequence.prefill_kv``, one prompt's
  KV, dropped when its last chunk ran or its blocks are freed): each chunk appends its own tokens, read
  back from the pool (so an int8 pool's values are the same as a gather's), and attends over a view of
  it, instead of gathering the whole history out of the blocks in every layer of every step. Measured
  (demo model, 1 thread, 4k tokens of history): the gather cost 0.66 ms a layer (4 ms a step, as much
  as a whole decode step), the copy's append nothing measurable, with identical outputs; a chunk that
  completes its prompt in one step gathers its history once and keeps no copy.

A step of exactly one token takes the model's decode fast path through ``update_kv`` instead.
No per-sequence contiguous working copy (which would cost every running sequence a full context of memory
outside the pool). Measured against one (``PagedCache``), one sequence decoding alone, demo model, one
thread: 276 vs 287 tokens/s at 128 tokens of context, 240 vs 262 at 1k, 152 vs 164 at 4k. Reading
consecutive blocks as a view instead of gathering them measured no faster: the gap is the pool's
token-major layout (what a gather of slots needs) against the copy's token-minor one, which the decode
matmuls read faster at long contexts. This module does not choose the rows (``scheduler``) or sample
(``runner``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from kvcache.attention import attend, attend_padded
from kvcache.caches.paged import BlockPool

if TYPE_CHECKING:  # the model imports this module; these import the model's neighbours
    from kvcache.scheduler import Chunk
    from kvcache.sequence import Sequence

NEG_INF = float("-inf")


def slot_map(seq: Sequence, block_size: int) -> torch.Tensor:
    """The pool slot of every position ``seq``'s blocks cover, kept on the sequence: rebuilt when its
    table grew (the allocator drops it when the table is freed)."""
    table = seq.block_table
    if seq.slot_map is None or seq.slot_map.shape[0] != len(table) * block_size:
        blocks = torch.tensor(table, dtype=torch.long)
        seq.slot_map = (blocks.view(-1, 1) * block_size + torch.arange(block_size)).view(-1)
    return seq.slot_map


class StepBatch:
    """``window``: the model's sliding window when every layer uses it (keys before it are never gathered,
    and the allocator frees their blocks); None otherwise."""

    def __init__(self, chunks: list[Chunk], pool: BlockPool, decode_buffers=None, window: int | None = None):
        self.pool, self.window = pool, window
        self.decode_buffers = decode_buffers  # the model's one-token scratch, kept by the runner across steps
        size = pool.block_size
        singles = [c for c in chunks if c.count == 1]
        self.chunks = singles + [c for c in chunks if c.count > 1]  # rows: one-token chunks first
        self.token_ids: list[int] = []
        positions, slots, self._maps, self._firsts = [], [], [], []
        for chunk in self.chunks:
            seq, end = chunk.seq, chunk.start + chunk.count
            self.token_ids.extend(seq.token_ids[chunk.start : end])
            full = slot_map(seq, size)[:end]
            first = max(0, chunk.start + 1 - window) if window else 0  # the first key its first query sees
            self._maps.append(full[first:])
            self._firsts.append(first)
            positions.append(torch.arange(chunk.start, end))
            slots.append(full[chunk.start :])
        self.positions = torch.cat(positions)
        self.write_slots = torch.cat(slots)
        rows, row = [], 0
        for chunk in self.chunks:
            row += chunk.count
            if chunk.samples:
                rows.append(row - 1)
        self.sampling = [c for c in self.chunks if c.samples]  # one logits row each, in this order
        self.logit_rows = torch.tensor(rows, dtype=torch.long)
        self.singles = len(singles)
        prompts = zip(self.chunks[self.singles :], self._firsts[self.singles :], strict=True)
        self._copies = [self._prefill_copy(chunk, first) for chunk, first in prompts]
        self._index = None
        if self.singles:
            counts = [m.shape[0] for m in self._maps[: self.singles]]
            self._index = torch.full((self.singles, max(counts)), pool.pad_slot, dtype=torch.long)
            for i, m in enumerate(self._maps[: self.singles]):
                self._index[i, : counts[i]] = m
            self._counts = torch.tensor(counts).view(-1, 1)
        self._bias: dict[int | None, torch.Tensor] = {}

    def _prefill_copy(self, chunk: Chunk, first: int) -> torch.Tensor | None:
        """The contiguous K/V copy a later chunk of a prompt reads (made at the prompt's second chunk, its
        history gathered once, when the prompt goes on after it); None for a first chunk, and for a last
        chunk that has none (it gathers its history once, as a chunk that completes a prompt)."""
        seq = chunk.seq
        copy = seq.prefill_kv
        if chunk.start == 0 or (copy is None and chunk.samples):
            return None
        if copy is None or copy.shape[2] < len(seq):
            pool, (layers, rows, _, dim) = self.pool, self.pool.kv.shape
            copy = torch.empty((layers, rows, len(seq), dim), dtype=pool.dtype)
            slots = slot_map(seq, pool.block_size)[first : chunk.start]
            for layer in range(layers):
                copy[layer, :, first : chunk.start] = pool.gather(layer, slots)
            seq.prefill_kv = copy
        return copy

    def finish(self) -> None:
        """After the forward pass: prompts whose last chunk ran drop their copy."""
        for chunk in self.chunks[self.singles :]:
            if chunk.samples:
                chunk.seq.prefill_kv = None

    def __len__(self) -> int:
        return len(self.token_ids)

    def advance(self) -> None:
        """The model's end-of-pass hook: nothing to do (the engine counts computed tokens)."""

    def _padding_bias(self, window: int | None) -> torch.Tensor:
        """[B, n]: 0 where a one-token row sees the key, -inf on padding and outside the window."""
        bias = self._bias.get(window)
        if bias is None:
            column = torch.arange(self._index.shape[1]).view(1, -1)
            visible = column < self._counts
            if window is not None:  # the row's query is its last key: position first + count - 1
                visible &= column > self._counts - 1 - window
            bias = self._bias[window] = torch.zeros(visible.shape, dtype=self.pool.dtype).masked_fill_(
                ~visible, NEG_INF
            )
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
        rest = self.singles
        chunks = zip(self.chunks[rest:], self._maps[rest:], self._firsts[rest:], self._copies, strict=True)
        for chunk, slots, first, copy in chunks:
            rows = slice(row, row + chunk.count)
            end = chunk.start + chunk.count
            if copy is not None:  # append this chunk's K/V as stored, read the history as a view
                copy[layer, :, chunk.start : end] = self.pool.gather(layer, slots[chunk.start - first :])
                keys, values = copy[layer, :kv_heads, first:end], copy[layer, kv_heads:, first:end]
            elif chunk.start == 0:  # a first chunk: its own fresh K/V, exact even in an int8 pool
                keys, values, first = k[:, rows], v[:, rows], 0
            else:
                stored = self.pool.gather(layer, slots)
                keys, values = stored[:kv_heads], stored[kv_heads:]
            key_pos = torch.arange(first, first + keys.shape[1])
            parts.append(attend(q[:, rows], keys, values, positions[rows], key_pos, window, scale))
            row += chunk.count
        return parts[0] if len(parts) == 1 else torch.cat(parts, dim=1)

    def update_kv(self, layer: int, kv: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The decode fast path (a step of one token): store it, return its sequence's keys and values."""
        self.pool.write(layer, self.write_slots, kv)
        stored = self.pool.gather(layer, self._maps[0])
        keys, values = stored.split_with_sizes((kv.shape[0] // 2,) * 2)
        return keys, values, torch.arange(self._firsts[0], self._firsts[0] + keys.shape[1])
