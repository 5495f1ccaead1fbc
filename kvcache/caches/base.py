"""The interface every KV cache implements, as the model's attention layers see it.

One cache serves one sequence. The model calls ``begin(token_ids)`` once per forward pass (the cache
answers with the absolute positions of those tokens), ``attend(layer, q, k, v, ...)`` once per layer (by
default ``update(layer, k, v)`` stores the new keys/values and returns every key/value the new queries may
attend to, with their positions, for ``layers.attention.attend``), then ``advance()``. Keys and values
are laid out ``[kv_heads, tokens, head_dim]``: only the KV heads are stored, never copies repeated per
query head. This module holds no storage itself.
"""

from __future__ import annotations

import torch

from kvcache.config import ModelConfig
from kvcache.errors import ContextLengthError
from kvcache.layers.attention import attend


class KVCache:
    """Base class: position bookkeeping and the size report; subclasses own the storage."""

    bytes_per_value: int = 0

    def __init__(self, config: ModelConfig, capacity: int):
        self.config = config
        self.capacity = capacity
        self.length = 0
        self._pending = 0
        self.decode_buffers = (
            None  # the model's per-sequence decode scratch (``layers.decoder.DecodeBuffers``)
        )

    def match_prefix(self, token_ids: list[int]) -> int:
        """How many leading tokens of the prompt are already cached (only paged caches share)."""
        return 0

    def begin(self, token_ids: list[int]) -> torch.Tensor:
        self._reserve(len(token_ids))
        return torch.arange(self.length, self.length + len(token_ids))

    def _reserve(self, count: int) -> None:
        if self.length + count > self.capacity:
            raise ContextLengthError(
                f"{self.length + count} tokens do not fit into this cache ({self.capacity} tokens)"
            )
        self._pending = count

    def update(
        self, layer: int, k: torch.Tensor, v: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        raise NotImplementedError

    def update_kv(self, layer: int, kv: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``update`` with K and V as one ``[2 · kv_heads, tokens, head_dim]`` tensor (K heads first); caches
        that store both in one buffer take it in one copy."""
        k, v = kv.split_with_sizes((kv.shape[0] // 2,) * 2)
        return self.update(layer, k, v)

    def attend(
        self,
        layer: int,
        q: torch.Tensor,
        k: torch.Tensor,
        v: torch.Tensor,
        positions: torch.Tensor,
        window: int | None,
        scale: float,
    ) -> torch.Tensor:
        """Store this pass's k/v ([H_kv, T, d]) for ``layer`` and attend q [H, T, d] to everything visible."""
        keys, values, key_pos = self.update(layer, k, v)
        if q.shape[1] > 1 and keys.shape[1] == q.shape[1]:
            # A first prefill: attend to the fresh k/v, contiguous and exact (an int8 cache's decode steps
            # still read its rounded copy, as vLLM's quantized caches do).
            keys, values = k, v
        return attend(q, keys, values, positions, key_pos, window, scale)

    def advance(self) -> None:
        self.length += self._pending
        self._pending = 0

    def release(self) -> None:
        """Give storage back (paged caches return their blocks to the shared pool)."""

    @property
    def nbytes(self) -> int:
        """Bytes of key/value storage actually allocated (without side tables such as int8 scales)."""
        raise NotImplementedError

    @property
    def extra_nbytes(self) -> int:
        """Bytes of side tables (int8 scales); 0 for plain caches."""
        return 0

    def formula_bytes(self, tokens: int) -> int:
        """The seeds' formula 2 · L · H_kv · d · n · bytes for ``tokens`` tokens in this cache's precision."""
        return self.config.kv_bytes_per_token(self.bytes_per_value) * tokens
