"""The Llama-family decoder stack: embeddings → layers → final norm → LM head, with or without a KV cache.

``forward(token_ids, cache)``: with a cache, the tokens are appended after what the cache already holds
(prefill: the whole prompt at once; decode: one token); without one, the tokens are the whole sequence.
Returns logits for the last token only (``all_logits=True`` for every position). With a
``layers.context.StepContext`` as the cache, the tokens are an engine step's rows from many sequences,
each at its own positions, and the logits are those of the rows that sample; ``decode_rows`` is one token
per row over fixed-shape tensors (CUDA graphs). Llama, Mistral and Qwen2 load into it. It does not sample
or loop (``generate``, ``engine``) and does not read files (``utils.loader``).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from kvcache.caches.base import KVCache
from kvcache.config import ModelConfig
from kvcache.errors import ContextLengthError
from kvcache.layers.context import StepContext
from kvcache.layers.decoder import DecodeBuffers, DecoderLayer
from kvcache.layers.linear import Projection
from kvcache.layers.norm import normed_row, rms_norm
from kvcache.layers.rotary import RotaryTable


@dataclass
class Model:
    config: ModelConfig
    dtype: torch.dtype
    embed: torch.Tensor
    layers: list[DecoderLayer]
    final_norm: torch.Tensor
    head: Projection  # the LM head; its weight is the embedding itself when tied
    rotary: RotaryTable

    @property
    def lm_head(self) -> torch.Tensor:
        """The LM head as ``[vocab, hidden]`` (a view when stored input-major; ``embed`` itself when tied)."""
        return self.head.weight

    @property
    def device(self) -> torch.device:
        return self.embed.device

    @property
    def max_context(self) -> int:
        return self.rotary.max_positions

    @property
    def weight_bytes(self) -> int:
        """Bytes of weights one decode step reads (embedding row excluded, LM head included)."""
        return self.final_norm.nbytes + self.head.nbytes + sum(layer.nbytes for layer in self.layers)

    @torch.inference_mode()
    def forward(
        self, token_ids: list[int], cache: KVCache | StepContext | None = None, all_logits: bool = False
    ) -> torch.Tensor:
        if not token_ids:
            raise ValueError("forward needs at least one token")
        if isinstance(cache, StepContext):
            return self._step(cache, all_logits)
        if cache is not None and not self.device.type == "cpu":
            raise ValueError("single-sequence KV caches live on the CPU; on a GPU the engine's pool serves")
        start = cache.length if cache is not None else 0  # new tokens follow what the cache holds
        end = start + len(token_ids)
        if end > self.max_context:
            raise ContextLengthError(f"position {end - 1} is beyond the model's context ({self.max_context})")
        positions = cache.begin(token_ids) if cache is not None else torch.arange(end, device=self.device)
        rope = self.rotary.at(start, end)
        if cache is not None and len(token_ids) == 1:
            return self._decode(token_ids[0], rope, positions, cache)
        if len(token_ids) == 1:  # one token without a cache: a view of one row, no index tensor
            h = self.embed[token_ids[0] : token_ids[0] + 1]
        else:
            h = self.embed[torch.tensor(token_ids, dtype=torch.long).to(self.device)]
        for layer in self.layers:
            h = layer.forward(h, rope, positions, cache)
        if cache is not None:
            cache.advance()
        if not all_logits and h.shape[0] > 1:
            h = h[-1:]
        logits = self.head(rms_norm(h, self.final_norm, self.config.rms_norm_eps))
        return logits if logits.dtype == torch.float32 else logits.float()

    def _step(self, batch: StepContext, all_logits: bool) -> torch.Tensor:
        """An engine step: rows of many sequences, each at its own positions (``StepContext``); logits
        for the rows that sample (``StepContext.logit_rows``), or every row with ``all_logits``."""
        positions = batch.positions
        last = batch.max_position if batch.max_position is not None else int(positions.max())
        if last >= self.max_context:
            raise ContextLengthError(f"position {last} is beyond the model's context ({self.max_context})")
        rope = (self.rotary.cos[positions], self.rotary.signed_sin[positions])
        if len(batch) == 1 and not all_logits and self.device.type == "cpu":
            return self._decode(batch.token_ids[0], rope, positions, batch)
        h = self.embed[torch.tensor(batch.token_ids, dtype=torch.long).to(self.device)]
        for layer in self.layers:
            h = layer.forward(h, rope, positions, batch)
        if not all_logits:
            if batch.logit_rows.numel() == 0:  # only prompt chunks that end mid-prompt: no row samples
                return torch.empty(0, self.config.vocab_size, device=self.device)
            h = h.index_select(0, batch.logit_rows)
        logits = self.head(rms_norm(h, self.final_norm, self.config.rms_norm_eps))
        return logits if logits.dtype == torch.float32 else logits.float()

    def decode_rows(self, token_ids: torch.Tensor, positions: torch.Tensor, cache) -> torch.Tensor:
        """One token for each of B rows, every row sampling: ``token_ids``/``positions`` [B] device tensors,
        ``cache`` a ``layers.static_decode.PaddedDecode`` (or anything with its ``attend``) → fp32 logits
        [B, vocab]. Nothing here reads a value back to the host or branches on one, so a CUDA graph can
        capture it (``engine.graphs``); positions are not checked against the context (the caller does)."""
        rope = (self.rotary.cos.index_select(0, positions), self.rotary.signed_sin.index_select(0, positions))
        h = self.embed.index_select(0, token_ids)
        for layer in self.layers:
            h = layer.forward(h, rope, positions, cache)
        return self.head(rms_norm(h, self.final_norm, self.config.rms_norm_eps)).float()

    def _decode(
        self,
        token: int,
        rope: tuple[torch.Tensor, ...],
        positions: torch.Tensor,
        cache: KVCache | StepContext,
    ):
        """One token over a cache: the residual stream is a fresh copy of the token's embedding that every
        layer updates in place (``DecoderLayer.decode``), with one 1-D view of it made once per step; the
        scratch buffers live on the cache (made at its first decode step)."""
        h = self.embed[token : token + 1].clone()
        row = h.view(-1)
        buffers = cache.decode_buffers
        if buffers is None or buffers.qkv.dtype != self.dtype:
            buffers = cache.decode_buffers = DecodeBuffers(self.layers[0], self.dtype)
        for layer in self.layers:
            layer.decode(h, row, rope, positions, cache, buffers)
        cache.advance()
        normed, scale = normed_row(h, row, self.final_norm, self.config.rms_norm_eps)
        logits = self.head.scaled(normed, scale)
        return logits if logits.dtype == torch.float32 else logits.float()
