"""The decoder stack: embeddings → layers → final norm → LM head, with or without a KV cache.

``forward(token_ids, cache)``: with a cache, the tokens are appended after what the cache already holds
(prefill: the whole prompt at once; decode: one token); without one, the tokens are the whole sequence.
Returns logits for the last token only (``all_logits=True`` for every position). This module does not
sample or loop (see ``generate``) and does not read files (see ``loader``).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from kvcache.caches.base import KVCache
from kvcache.config import ModelConfig
from kvcache.errors import ContextLengthError
from kvcache.layers import DecoderLayer, rms_norm
from kvcache.rope import RotaryTable


@dataclass
class Model:
    config: ModelConfig
    dtype: torch.dtype
    embed: torch.Tensor
    layers: list[DecoderLayer]
    final_norm: torch.Tensor
    lm_head: torch.Tensor  # the embedding itself when tied
    rotary: RotaryTable

    @property
    def max_context(self) -> int:
        return self.rotary.max_positions

    @property
    def weight_bytes(self) -> int:
        """Bytes of weights one decode step reads (embedding row excluded, LM head included)."""
        total = self.final_norm.nbytes + self.lm_head.nbytes
        for layer in self.layers:
            total += sum(
                t.nbytes
                for t in (
                    layer.input_norm,
                    layer.post_norm,
                    layer.qkv_weight,
                    layer.o_weight,
                    layer.gate_up_weight,
                    layer.down_weight,
                )
            )
            total += layer.qkv_bias.nbytes if layer.qkv_bias is not None else 0
        return total

    @torch.inference_mode()
    def forward(self, token_ids: list[int], cache: KVCache | None = None, all_logits: bool = False) -> torch.Tensor:
        if not token_ids:
            raise ValueError("forward needs at least one token")
        start = cache.length if cache is not None else 0  # new tokens follow what the cache holds
        end = start + len(token_ids)
        if end > self.max_context:
            raise ContextLengthError(f"position {end - 1} is beyond the model's context ({self.max_context})")
        positions = cache.begin(token_ids) if cache is not None else torch.arange(end)
        rope = (*self.rotary.at(start, end), self.rotary.rotation)
        h = self.embed[torch.tensor(token_ids, dtype=torch.long)]
        for layer in self.layers:
            h = layer.forward(h, rope, positions, cache)
        if cache is not None:
            cache.advance()
        if not all_logits:
            h = h[-1:]
        return F.linear(rms_norm(h, self.final_norm, self.config.rms_norm_eps), self.lm_head).float()
