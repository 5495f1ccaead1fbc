"""The model runner: one scheduled step in, one new token for each sequence that reached its end out.

A step of decodes only, when the runner has ``graphs`` (a GPU engine), runs on static buffers as a CUDA
graph of its ladder size (``engine.graphs``); any other step builds its ``StepBatch`` (rows, positions,
pool slots) and runs ``Model.forward`` over its ``StepContext``. Either way the weights are read once for
every row of every sequence, each chunk's ``num_computed`` advances, and the rows that reached the end
of their sequence sample on the device (greedy rows by one argmax for all, others with their sequence's
seeded ``Sampler``); the sampled tokens come back to the host in one read. It keeps the model's one-token
decode scratch between steps. It does not decide what runs (``scheduler``) or when a sequence ends (``loop``).
"""

from __future__ import annotations

import torch

from kvcache.caches.paged import BlockPool
from kvcache.engine.graphs import DecodeGraphs, DecodeRow
from kvcache.engine.scheduler import Chunk
from kvcache.engine.sequence import Sequence
from kvcache.engine.step_batch import StepBatch, slot_map
from kvcache.models.llama import Model


class ModelRunner:
    def __init__(
        self, model: Model, pool: BlockPool, window: int | None = None, graphs: DecodeGraphs | None = None
    ):
        self.model, self.pool, self.window, self.graphs = model, pool, window, graphs
        self.decode_buffers = None
        self.graph_steps = 0  # steps that ran on the static path

    def step(self, chunks: list[Chunk]) -> list[tuple[Sequence, int]]:
        """Run ``chunks``; returns (sequence, sampled token) for each chunk that samples, in schedule order."""
        rows = self._decode_rows(chunks) if self.graphs is not None else None
        if rows is not None:
            logits, greedy = self.graphs.run(rows)
            sampled = chunks
            self.graph_steps += 1
        else:
            batch = StepBatch(chunks, self.pool, self.decode_buffers, self.window)
            logits = self.model.forward(batch.token_ids, batch.context)
            self.decode_buffers = batch.context.decode_buffers
            batch.finish()
            sampled = batch.sampling
            greedy = logits.argmax(dim=-1) if sampled else None
        for chunk in chunks:
            chunk.seq.num_computed += chunk.count
        if not sampled:
            return []
        if all(c.seq.sampler.params.greedy for c in sampled):
            tokens = greedy.tolist()
        else:
            picks = [
                greedy[row] if c.seq.sampler.params.greedy else c.seq.sampler.sample(logits[row])
                for row, c in enumerate(sampled)
            ]
            tokens = torch.stack(picks).tolist()
        return [(chunk.seq, token) for chunk, token in zip(sampled, tokens, strict=True)]

    def _decode_rows(self, chunks: list[Chunk]) -> list[DecodeRow] | None:
        """The step as static-path rows when every chunk is one token that samples (a decode, or a prompt's
        last token) and within the ladder; else None (a one-token chunk mid-prompt must not sample)."""
        if any(c.count != 1 or not c.samples for c in chunks):
            return None
        size, window, rows = self.pool.block_size, self.window, []
        for chunk in chunks:
            seq, position = chunk.seq, chunk.start
            if position >= self.model.max_context:
                return None  # the eager path raises the context error
            first = max(0, position + 1 - window) if window else 0
            write = seq.block_table[position // size] * size + position % size
            keys = slot_map(seq, size)[first : position + 1]
            rows.append(DecodeRow(seq.token_ids[position], position, write, keys))
        return rows if self.graphs.fits(len(rows), max(r.key_slots.shape[0] for r in rows)) else None
