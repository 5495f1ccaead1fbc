"""Blocks for sequences: prefix matching, growing a block table for a step's tokens, publishing full
blocks, and freeing, over the pool's ``BlockManager`` (as nano-vllm's BlockManager does for a Sequence).

An admitted sequence attaches the cached full blocks at the head of its tokens (at least one token is
left to compute). A block is published when the step that fills it is *scheduled*, so two requests with
one system prompt in one step compute it once; ``forget_step`` unpublishes a failed step's blocks. With
one sliding window on every layer, blocks wholly behind it are freed as the sequence advances. Details:
docs/engine.md. It does not choose who runs (``scheduler``) and does not touch tensors.
"""

from __future__ import annotations

from kvcache.caches.blocks import BlockManager, block_hash
from kvcache.engine.sequence import Sequence


class BlockAllocator:
    def __init__(self, manager: BlockManager, prefix_sharing: bool = True, window: int | None = None):
        self.manager = manager
        self.window = window  # every layer's sliding window: blocks wholly behind it are freed
        self.block_size = manager.block_size
        self.prefix_sharing = prefix_sharing
        self.published: list[int] = []  # blocks published for the step being scheduled
        self.queried_tokens = 0  # prefix-cache look-ups, in prompt tokens (first admissions only)
        self.hit_tokens = 0

    @property
    def num_free(self) -> int:
        return self.manager.num_free

    def blocks_needed(self, seq: Sequence, count: int) -> int:
        """New blocks ``seq`` needs to hold ``count`` more computed tokens."""
        return max(0, -(-(seq.num_computed + count) // self.block_size) - len(seq.block_table))

    def match_prefix(self, seq: Sequence) -> int:
        """Attach the cached full blocks at the head of ``seq`` (which holds no blocks); returns the tokens
        matched, now counted as computed."""
        assert not seq.block_table and seq.num_computed == 0
        matched = 0
        if self.prefix_sharing:
            size, previous = self.block_size, b""
            for index in range((len(seq) - 1) // size):
                block_tokens = seq.token_ids[index * size : (index + 1) * size]
                block_id, h = self.manager.lookup(previous, block_tokens)
                if block_id is None:
                    break
                self.manager.acquire(block_id)
                seq.block_table.append(block_id)
                seq.block_hashes.append(h)
                previous = h
            matched = len(seq.block_table) * size
        seq.num_computed = matched
        return matched

    def admitted(self, seq: Sequence) -> None:
        """Count a first admission's prefix-cache look-up (``cached_tokens`` in the request's usage)."""
        if seq.cached_tokens is None:
            seq.cached_tokens = seq.num_computed
            self.queried_tokens += seq.num_prompt_tokens
            self.hit_tokens += seq.num_computed

    def allocate(self, seq: Sequence, count: int) -> None:
        """Blocks for the next ``count`` tokens of ``seq``, and publish the blocks they fill."""
        if self.window:
            self._trim(seq)
        for _ in range(self.blocks_needed(seq, count)):
            seq.block_table.append(self.manager.allocate())
        size, full = self.block_size, (seq.num_computed + count) // self.block_size
        while len(seq.block_hashes) < full:
            index = len(seq.block_hashes)
            tokens = seq.token_ids[index * size : (index + 1) * size]
            parent = seq.block_hashes[-1] if seq.block_hashes else b""
            h = block_hash(parent, tokens)
            block_id = seq.block_table[index]
            if self.prefix_sharing:
                self.manager.register(block_id, h, tokens, parent)
                self.published.append(block_id)
            seq.block_hashes.append(h)

    def _trim(self, seq: Sequence) -> None:
        """Free the head blocks no query from ``num_computed`` on can see (a hole, -1, stays in the table;
        the block stays cached for prefix sharing until it is recycled)."""
        visible_from = seq.num_computed - self.window + 1
        while (seq.trimmed + 1) * self.block_size <= visible_from:
            self.manager.release(seq.block_table[seq.trimmed])
            seq.block_table[seq.trimmed] = -1
            seq.trimmed += 1

    def begin_step(self) -> None:
        self.published = []

    def forget_step(self) -> None:
        """The step failed: its published blocks hold no KV, so nothing may match them."""
        for block_id in self.published:
            self.manager.forget(block_id)
        self.published = []

    def free(self, seq: Sequence) -> None:
        """Hand every block back, last first (a prefix's tail is recycled before its head)."""
        for block_id in reversed(seq.block_table[seq.trimmed :]):
            self.manager.release(block_id)
        seq.block_table, seq.block_hashes, seq.num_computed, seq.slot_map, seq.trimmed = [], [], 0, None, 0
        seq.prefill_kv = None
