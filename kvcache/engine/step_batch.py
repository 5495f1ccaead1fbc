"""One engine step's scheduled chunks turned into the network's ``layers.context.StepContext``.

A step holds one token for each decoding sequence and a chunk of tokens for each sequence still in its
prefill. ``StepBatch`` orders the rows (one-token chunks first), lists each row's position and the pool
slot its new K/V goes to, the key slots each chunk's queries see (through the sequence's block table,
``Sequence.slot_map``, from a sliding window's start), and the rows that sample. A prompt prefilled in
several chunks keeps a contiguous copy of its K/V (``Sequence.prefill_kv``) from its second chunk until
its last one has run (``finish``). This module does not choose the rows (``scheduler``), attend
(``layers.context``) or sample (``model_runner``); why it is built this way: docs/engine.md.
"""

from __future__ import annotations

import torch

from kvcache.caches.paged import BlockPool
from kvcache.engine.scheduler import Chunk
from kvcache.engine.sequence import Sequence
from kvcache.layers.context import Rows, StepContext


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
    and the allocator frees their blocks); None otherwise. ``context`` is what the model receives."""

    def __init__(self, chunks: list[Chunk], pool: BlockPool, decode_buffers=None, window: int | None = None):
        self.pool, self.window = pool, window
        size, device = pool.block_size, pool.device
        singles = [c for c in chunks if c.count == 1]
        self.chunks = singles + [c for c in chunks if c.count > 1]  # rows: one-token chunks first
        token_ids: list[int] = []
        positions, slots, rows = [], [], []
        for chunk in self.chunks:
            seq, end = chunk.seq, chunk.start + chunk.count
            token_ids.extend(seq.token_ids[chunk.start : end])
            full = slot_map(seq, size)[:end]
            first = max(0, chunk.start + 1 - window) if window else 0  # the first key its first query sees
            keys = (
                full[first:] if chunk.count == 1 else full[first:].to(device)
            )  # singles: padded on the host
            rows.append(Rows(chunk.start, chunk.count, keys, first))
            positions.append(torch.arange(chunk.start, end))
            slots.append(full[chunk.start :])
        logit_rows, row = [], 0
        for chunk in self.chunks:
            row += chunk.count
            if chunk.samples:
                logit_rows.append(row - 1)
        self.sampling = [c for c in self.chunks if c.samples]  # one logits row each, in this order
        self.singles = len(singles)
        for chunk, prompt in zip(self.chunks[self.singles :], rows[self.singles :], strict=True):
            prompt.copy = self._prefill_copy(chunk, prompt.first)
        self.context = StepContext(
            token_ids=token_ids,
            positions=torch.cat(positions).to(device),
            write_slots=torch.cat(slots).to(device),
            logit_rows=torch.tensor(logit_rows, dtype=torch.long).to(device),
            pool=pool,
            singles=rows[: self.singles],
            chunks=rows[self.singles :],
            decode_buffers=decode_buffers,
            max_position=max(c.start + c.count for c in self.chunks) - 1,
        )

    @property
    def token_ids(self) -> list[int]:
        return self.context.token_ids

    def __len__(self) -> int:
        return len(self.context)

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
            copy = torch.empty((layers, rows, len(seq), dim), dtype=pool.dtype, device=pool.device)
            slots = slot_map(seq, pool.block_size)[first : chunk.start].to(pool.device)
            for layer in range(layers):
                copy[layer, :, first : chunk.start] = pool.gather(layer, slots)
            seq.prefill_kv = copy
        return copy

    def finish(self) -> None:
        """After the forward pass: prompts whose last chunk ran drop their copy."""
        for chunk in self.chunks[self.singles :]:
            if chunk.samples:
                chunk.seq.prefill_kv = None
