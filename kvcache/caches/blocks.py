"""Block bookkeeping for the paged cache: allocation, reference counts, and prefix sharing by hash.

A full block is identified by a chained hash ``h = blake2b(h_prev || token ids)``, and only shared when
its own token ids and its parent's hash are equal too, so a collision never shares a wrong block. Freed
blocks keep their hash in an LRU list: a later request with the same prefix revives them; a new
allocation recycles the least recently freed one and forgets its hash. Sequences free their blocks last
block first, so a prefix's tail is recycled before its head. Same design as vLLM's prefix caching and
nano-vllm's BlockManager (more in docs/engine.md). This module does not touch tensors (see ``paged``).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass, field

from kvcache.errors import EngineError


def block_hash(previous: bytes, token_ids: list[int]) -> bytes:
    data = b",".join(str(t).encode() for t in token_ids)
    return hashlib.blake2b(previous + b"|" + data, digest_size=16).digest()


@dataclass
class Block:
    block_id: int
    ref_count: int = 0
    hash: bytes | None = None
    parent: bytes = b""  # the chained hash of the block before this one (b"" for a first block)
    token_ids: tuple[int, ...] = field(default=())


class BlockManager:
    def __init__(self, num_blocks: int, block_size: int):
        if num_blocks <= 0 or block_size <= 0:
            raise ValueError("num_blocks and block_size must be positive")
        self.block_size = block_size
        self.blocks = [Block(i) for i in range(num_blocks)]
        self.free: OrderedDict[int, None] = OrderedDict((i, None) for i in range(num_blocks))
        self.by_hash: dict[bytes, int] = {}
        self.hits = 0  # blocks served from the prefix cache, over the manager's life

    @property
    def num_free(self) -> int:
        return len(self.free)

    def allocate(self) -> int:
        if not self.free:
            raise EngineError("the KV block pool is full; raise --kv-blocks or lower --max-context")
        block_id, _ = self.free.popitem(last=False)  # least recently freed
        block = self.blocks[block_id]
        if block.hash is not None and self.by_hash.get(block.hash) == block_id:
            del self.by_hash[block.hash]
        block.hash, block.parent, block.token_ids, block.ref_count = None, b"", (), 1
        return block_id

    def lookup(self, previous: bytes, token_ids: list[int]) -> tuple[int | None, bytes]:
        """The cached block holding exactly this prefix block, if any, and the block's chained hash."""
        h = block_hash(previous, token_ids)
        block_id = self.by_hash.get(h)
        if block_id is not None:
            block = self.blocks[block_id]
            if block.parent == previous and block.token_ids == tuple(token_ids):
                return block_id, h
        return None, h

    def acquire(self, block_id: int) -> None:
        block = self.blocks[block_id]
        if block.ref_count == 0:
            self.free.pop(block_id, None)
        block.ref_count += 1
        self.hits += 1

    def register(self, block_id: int, h: bytes, token_ids: list[int], parent: bytes = b"") -> None:
        """Publish a block that just became full so later prompts with this prefix can share it."""
        block = self.blocks[block_id]
        block.hash, block.parent, block.token_ids = h, parent, tuple(token_ids)
        self.by_hash.setdefault(h, block_id)

    def forget(self, block_id: int) -> None:
        """Unpublish a block (its KV was never computed: the step that was to fill it failed)."""
        block = self.blocks[block_id]
        if block.hash is not None and self.by_hash.get(block.hash) == block_id:
            del self.by_hash[block.hash]
        block.hash, block.parent, block.token_ids = None, b"", ()

    def release(self, block_id: int) -> None:
        block = self.blocks[block_id]
        if block.ref_count <= 0:
            raise ValueError(f"block {block_id} released more often than it was taken")
        block.ref_count -= 1
        if block.ref_count == 0:
            self.free[block_id] = None
