"""The paged KV cache: a pool of fixed-size blocks shared by all requests, with prefix sharing.

``BlockPool`` owns the storage, ``[layers, blocks · block_size, kv_heads, head_dim]`` for K and for V
(2 · L · H_kv · d · blocks · block_size · bytes), and a ``BlockManager``. ``PagedCache`` is one sequence's
view: a block table plus the slot of each of its tokens. ``match_prefix`` attaches already-computed full
blocks of the prompt (their KV is reused, not recomputed); at least one prompt token is always computed so
the first new token has logits.
torch has no paged-attention kernel on CPU, and gathering a sequence's scattered slots on every step
copies its whole KV per layer per token (at 4k tokens that more than doubled a decode step). So each
sequence also keeps a contiguous token-minor working copy of its own KV (as ``ContiguousCache``): the
shared prefix is copied in once by ``match_prefix``, every new token is written to its pool slot and to the
copy, and attention reads the copy. That costs one sequence's KV more memory while it runs
(``workspace_nbytes``; pages are only touched as tokens arrive). It does not batch sequences.
"""

from __future__ import annotations

import torch

from kvcache import hugepages
from kvcache.caches.base import KVCache
from kvcache.caches.blocks import BlockManager
from kvcache.config import ModelConfig


class BlockPool:
    def __init__(self, config: ModelConfig, num_blocks: int, block_size: int = 16, dtype: torch.dtype = torch.float32):
        self.config = config
        self.block_size = block_size
        self.manager = BlockManager(num_blocks, block_size)
        shape = (config.num_layers, num_blocks * block_size, config.num_kv_heads, config.head_dim)
        self.k = hugepages.empty(shape, dtype)
        self.v = hugepages.empty(shape, dtype)

    @property
    def nbytes(self) -> int:
        return self.k.nbytes + self.v.nbytes

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
        c = pool.config
        shape = (c.num_layers, c.num_kv_heads, c.head_dim, capacity)
        self.work_k = hugepages.empty(shape, pool.k.dtype)
        self.work_v = hugepages.empty(shape, pool.k.dtype)
        # [H_kv, capacity, d] views of each layer's working copy, made once
        self._layers = [(self.work_k[i].transpose(1, 2), self.work_v[i].transpose(1, 2)) for i in range(c.num_layers)]
        self.positions = torch.arange(capacity)

    def match_prefix(self, token_ids: list[int]) -> int:
        if self.length:
            raise ValueError("match_prefix must come before the first forward pass")
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
            for layer, (work_k, work_v) in enumerate(self._layers):
                work_k[:, :matched].copy_(self.pool.k[layer][self.slots].transpose(0, 1))
                work_v[:, :matched].copy_(self.pool.v[layer][self.slots].transpose(0, 1))
        self.length = self.cached_tokens = matched
        return matched

    def begin(self, token_ids: list[int]) -> torch.Tensor:
        positions = super().begin(token_ids)
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

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        self.pool.k[layer][self._new_slots] = k.transpose(0, 1)  # the pool: what later requests share
        self.pool.v[layer][self._new_slots] = v.transpose(0, 1)
        start, end = self.length, self.length + k.shape[1]
        work_k, work_v = self._layers[layer]
        keys, values = work_k.narrow(1, 0, end), work_v.narrow(1, 0, end)
        keys.narrow(1, start, end - start).copy_(k)
        values.narrow(1, start, end - start).copy_(v)
        return keys, values, self.positions[:end]

    def advance(self) -> None:
        super().advance()
        size, manager = self.pool.block_size, self.pool.manager
        while len(self._hashes) < self.length // size:  # publish blocks that just became full
            index = len(self._hashes)
            tokens = self.token_ids[index * size : (index + 1) * size]
            _, h = manager.lookup(self._hashes[-1] if self._hashes else b"", tokens)
            manager.register(self.block_table[index], h, tokens)
            self._hashes.append(h)

    def release(self) -> None:
        for block_id in self.block_table:
            self.pool.manager.release(block_id)
        self.block_table = []

    @property
    def nbytes(self) -> int:
        """Bytes of the blocks this sequence holds (the pool's total is ``BlockPool.nbytes``)."""
        per_block = 2 * self.pool.k[0, : self.pool.block_size].nbytes * self.config.num_layers
        return per_block * len(self.block_table)

    @property
    def workspace_nbytes(self) -> int:
        """Bytes of the contiguous working copy (reserved for ``capacity`` tokens; touched as they arrive)."""
        return self.work_k.nbytes + self.work_v.nbytes
