"""The paged KV cache: a pool of fixed-size blocks shared by all requests, with prefix sharing.

``BlockPool`` owns the storage, K and V of every slot (2 · L · H_kv · d · blocks · block_size · bytes), and
a ``BlockManager``; the engine's steps (``layers.context``) write and gather its slots directly through
each sequence's block table. ``PagedCache`` is one sequence's view (``Generation`` over the pool): a block
table, its tokens' slots, ``match_prefix`` attaching already-computed full blocks (at least one prompt
token is always computed), and a ``ContiguousCache`` working copy that attention reads (why:
docs/engine.md). New tokens only ever go to blocks the sequence allocated itself. ``PagedCache`` does not
batch sequences (``engine.step_batch`` does, over the same pool).
"""

from __future__ import annotations

import torch

from kvcache.caches.base import KVCache
from kvcache.caches.blocks import BlockManager, block_hash
from kvcache.caches.contiguous import ContiguousCache
from kvcache.config import ModelConfig
from kvcache.utils import hugepages


def empty_on(shape: tuple[int, ...], dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """A pool's storage: on huge pages on the CPU, plain device memory elsewhere."""
    if device.type == "cpu":
        return hugepages.empty(shape, dtype)
    return torch.empty(shape, dtype=dtype, device=device)


class BlockPool:
    """The blocks' storage, ``kv [layers, 2 · kv_heads, slots + 1, head_dim]`` (K heads, then V heads; a
    slot is one token of one block), and their ``BlockManager``, on ``device``. The one slot past the blocks
    is the padding a batch's gather may point at (``pad_slot``: zeros at first; a padded row of a static
    decode batch writes there, and no query ever sees it). ``k``/``v`` view the blocks' part as
    ``[layers, slots, kv_heads, head_dim]``."""

    def __init__(
        self,
        config: ModelConfig,
        num_blocks: int,
        block_size: int = 16,
        dtype: torch.dtype = torch.float32,
        device: torch.device | str = "cpu",
    ):
        self.config = config
        self.block_size = block_size
        self.manager = BlockManager(num_blocks, block_size)
        self.num_slots = num_blocks * block_size
        self.pad_slot = self.num_slots
        self.device = torch.device(device)
        kv_heads = config.num_kv_heads
        self.kv = empty_on(
            (config.num_layers, 2 * kv_heads, self.num_slots + 1, config.head_dim), dtype, self.device
        )
        self.kv[:, :, self.pad_slot].zero_()
        self.k = self.kv[:, :kv_heads, : self.num_slots].transpose(1, 2)
        self.v = self.kv[:, kv_heads:, : self.num_slots].transpose(1, 2)
        self.dtype = dtype

    @property
    def nbytes(self) -> int:
        return self.k.nbytes + self.v.nbytes

    @property
    def extra_nbytes(self) -> int:
        """Side tables (an int8 pool's scales); 0 here."""
        return 0

    def write(self, layer: int, slots: torch.Tensor, kv: torch.Tensor) -> None:
        """Store new tokens' K and V, ``kv [2 · kv_heads, T, head_dim]``, at ``slots [T]``."""
        self.kv[layer].index_copy_(1, slots, kv)

    def gather(self, layer: int, slots: torch.Tensor) -> torch.Tensor:
        """The K and V at ``slots [n]`` as one new ``[2 · kv_heads, n, head_dim]`` tensor (one copy)."""
        return self.kv[layer].index_select(1, slots)

    def sequence(self, capacity: int) -> PagedCache:
        return PagedCache(self, capacity)


class PagedCache(KVCache):
    def __init__(self, pool: BlockPool, capacity: int):
        super().__init__(pool.config, capacity)
        self.pool = pool
        self.bytes_per_value = pool.k.element_size()
        self.block_table: list[int] = []
        self.token_ids: list[int] = []
        self.slots = torch.empty(0, dtype=torch.long)
        self.cached_tokens = 0
        self._hashes: list[bytes] = []  # chained hash of each full block of this sequence
        self._new_slots = torch.empty(0, dtype=torch.long)
        self.work: ContiguousCache | None = ContiguousCache(pool.config, capacity, pool.k.dtype)

    def _working_copy(self) -> ContiguousCache:
        if self.work is None:
            raise ValueError("this paged cache was released; start a new sequence from the pool")
        return self.work

    def match_prefix(self, token_ids: list[int]) -> int:
        if self.length:
            raise ValueError("match_prefix must come before the first forward pass")
        work = self._working_copy()
        size, manager = self.pool.block_size, self.pool.manager
        previous = b""
        for index in range((len(token_ids) - 1) // size):
            block_tokens = token_ids[index * size : (index + 1) * size]
            block_id, h = manager.lookup(previous, block_tokens)
            if block_id is None:
                break
            manager.acquire(block_id)
            self.block_table.append(block_id)
            self._hashes.append(h)
            previous = h
        matched = len(self.block_table) * size
        self.token_ids = list(token_ids[:matched])
        self.slots = self._slots_for(0, matched)
        if matched:  # the shared prefix's KV, copied once into this sequence's working copy
            work.begin(self.token_ids)
            kv_heads = self.config.num_kv_heads
            for layer in range(self.config.num_layers):
                stored = self.pool.gather(layer, self.slots)
                work.update(layer, stored[:kv_heads], stored[kv_heads:])
            work.advance()
        self.length = self.cached_tokens = matched
        return matched

    def begin(self, token_ids: list[int]) -> torch.Tensor:
        work = self._working_copy()
        self._reserve(len(token_ids))
        positions = work.begin(token_ids)
        size = self.pool.block_size
        needed = -(-(self.length + len(token_ids)) // size)
        while len(self.block_table) < needed:
            self.block_table.append(self.pool.manager.allocate())
        self._new_slots = self._slots_for(self.length, self.length + len(token_ids))
        self.slots = torch.cat((self.slots, self._new_slots))
        self.token_ids.extend(token_ids)
        return positions

    def _slots_for(self, start: int, end: int) -> torch.Tensor:
        size = self.pool.block_size
        table = torch.tensor(self.block_table, dtype=torch.long)
        index = torch.arange(start, end)
        return table[index // size] * size + index % size if end > start else index

    def update(
        self, layer: int, k: torch.Tensor, v: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        self.pool.write(layer, self._new_slots, torch.cat((k, v)))  # the pool: what later requests share
        return self._working_copy().update(layer, k, v)  # what attention reads

    def update_kv(self, layer: int, kv: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        self.pool.write(layer, self._new_slots, kv)
        return self._working_copy().update_kv(layer, kv)

    def advance(self) -> None:
        super().advance()
        self._working_copy().advance()
        size, manager = self.pool.block_size, self.pool.manager
        while len(self._hashes) < self.length // size:  # publish blocks that just became full
            index = len(self._hashes)
            tokens = self.token_ids[index * size : (index + 1) * size]
            parent = self._hashes[-1] if self._hashes else b""
            h = block_hash(parent, tokens)
            manager.register(self.block_table[index], h, tokens, parent)
            self._hashes.append(h)

    def release(self) -> None:
        """Hand every block back (last first: a prefix's tail is recycled before its head) and drop the
        working copy. Idempotent; the sequence cannot run afterwards."""
        for block_id in reversed(self.block_table):
            self.pool.manager.release(block_id)
        self.block_table = []
        self.work = None

    @property
    def nbytes(self) -> int:
        """Bytes of the blocks this sequence holds (the pool's total is ``BlockPool.nbytes``)."""
        per_block = 2 * self.pool.k[0, : self.pool.block_size].nbytes * self.config.num_layers
        return per_block * len(self.block_table)

    @property
    def workspace_nbytes(self) -> int:
        """Bytes of the working copy (reserved for ``capacity`` tokens; touched as they arrive; 0 once released)."""
        return self.work.nbytes if self.work is not None else 0
