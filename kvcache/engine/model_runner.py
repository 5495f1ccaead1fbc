"""The model runner: one scheduled step in, one new token for each sequence that reached its end out.

It builds the step's ``StepBatch`` (rows, positions, pool slots), runs ``Model.forward`` over its
``StepContext`` (the weights are read once for every row of every sequence), advances each chunk's
``num_computed`` and samples the rows that reached the end of their sequence: greedy rows with one argmax
for all, others with their sequence's own seeded ``Sampler``. It keeps the model's one-token decode
scratch between steps. It does not decide what runs (``scheduler``) or when a sequence ends (``loop``).
"""

from __future__ import annotations

from kvcache.caches.paged import BlockPool
from kvcache.engine.scheduler import Chunk
from kvcache.engine.sequence import Sequence
from kvcache.engine.step_batch import StepBatch
from kvcache.models.llama import Model


class ModelRunner:
    def __init__(self, model: Model, pool: BlockPool, window: int | None = None):
        self.model, self.pool, self.window = model, pool, window
        self.decode_buffers = None

    def step(self, chunks: list[Chunk]) -> list[tuple[Sequence, int]]:
        """Run ``chunks``; returns (sequence, sampled token) for each chunk that samples, in schedule order."""
        batch = StepBatch(chunks, self.pool, self.decode_buffers, self.window)
        logits = self.model.forward(batch.token_ids, batch.context)
        self.decode_buffers = batch.context.decode_buffers
        batch.finish()
        for chunk in chunks:
            chunk.seq.num_computed += chunk.count
        sampled = batch.sampling
        if not sampled:
            return []
        greedy = logits.argmax(dim=-1).tolist()
        out = []
        for row, chunk in enumerate(sampled):
            seq = chunk.seq
            token = greedy[row] if seq.sampler.params.greedy else seq.sampler(logits[row])
            out.append((seq, token))
        return out
