"""The decoder layer's parts as plain tensor code: RMSNorm, GQA attention over a cache, SwiGLU MLP.

Weights are ``Projection``s (plain tensors, no nn.Module hooks on the hot path); q/k/v and gate/up are
fused into one matmul each at load time. GQA/MQA is native: each group of query heads is multiplied with
its one KV head, never with repeated copies. A prompt (several new tokens) goes through torch's fused CPU
attention kernel (``enable_gqa``); a one-token decode step uses two batched matmuls instead, which read
the cache about twice as fast at long contexts when the cache stores keys and values token-minor (see
``ContiguousCache``). Attention is masked by absolute positions (causal, plus the sliding window when the
layer has one), so every cache kind can hand back its keys in any order.
This module does not know where weights come from (``loader``) or how layers are stacked (``model``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from kvcache.caches.base import KVCache
from kvcache.linear import Projection
from kvcache.rope import apply_rotary


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """Normalised in fp32, cast back, then scaled: the same order of operations as transformers."""
    if x.dtype == torch.float32:
        if x.shape[0] == 1:  # a decode step: one dot product and two scalings (a third fewer kernels)
            row = x.view(-1)
            scale = 1.0 / math.sqrt(float(torch.dot(row, row)) / row.shape[0] + eps)
            return torch.mul(x, weight).mul_(scale)
        return F.rms_norm(x, weight.shape, weight, eps)  # bit-identical to the three-step form in fp32
    h = x.float()
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    return weight * h.to(x.dtype)


def _window_mask(q_pos: torch.Tensor, k_pos: torch.Tensor, window: int | None) -> torch.Tensor:
    mask = k_pos.view(1, -1) <= q_pos.view(-1, 1)
    if window is not None:
        mask &= k_pos.view(1, -1) > q_pos.view(-1, 1) - window
    return mask


def attend(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    q_pos: torch.Tensor,
    k_pos: torch.Tensor,
    window: int | None,
    scale: float,
) -> torch.Tensor:
    """q: [H, T, d]; k, v: [H_kv, n, d] (any strides) → [H, T, d]."""
    count, keys = q.shape[1], k.shape[1]
    if count == 1:
        mask = None if window is None else _window_mask(q_pos, k_pos, window)
        return attend_one(q, k, v, mask, scale)
    if k.stride(-1) != 1:  # token-minor cache views: the fused kernel is many times slower on them
        k, v = k.contiguous(), v.contiguous()
    causal = window is None and count == keys  # the keys are exactly these tokens: plain causal
    mask = None if causal else _window_mask(q_pos, k_pos, window)
    out = F.scaled_dot_product_attention(
        q[None], k[None], v[None], attn_mask=mask, is_causal=causal, scale=scale, enable_gqa=True
    )
    return out[0]


def attend_one(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None, scale: float
) -> torch.Tensor:
    """One query token: q [H, 1, d], k/v [H_kv, n, d] → [H, 1, d]; query head h reads KV head h // group.

    A decode query comes after every cached key, so only a sliding window needs a mask ([1, n] bool).
    """
    heads, kv_heads, d = q.shape[0], k.shape[0], q.shape[-1]
    grouped = q.reshape(kv_heads, heads // kv_heads, d)
    scores = torch.bmm(grouped, k.transpose(1, 2))  # [H_kv, group, n]
    scores *= scale
    if mask is not None:
        scores.masked_fill_(~mask, float("-inf"))
    if scores.dtype == torch.float32:
        probs = torch.softmax(scores, dim=-1)
    else:  # half precision: normalise in fp32 like torch's fused kernel does
        probs = torch.softmax(scores, dim=-1, dtype=torch.float32).to(scores.dtype)
    return torch.bmm(probs, v).view(heads, 1, d)


@dataclass
class DecoderLayer:
    index: int
    input_norm: torch.Tensor
    post_norm: torch.Tensor
    qkv: Projection  # [(H + 2·H_kv)·d, hidden], bias for Qwen2
    o_proj: Projection
    gate_up: Projection  # [2·intermediate, hidden]
    down: Projection
    num_heads: int
    num_kv_heads: int
    head_dim: int
    window: int | None
    eps: float

    @property
    def nbytes(self) -> int:
        projections = self.qkv.nbytes + self.o_proj.nbytes + self.gate_up.nbytes + self.down.nbytes
        return projections + self.input_norm.nbytes + self.post_norm.nbytes

    def forward(
        self, x: torch.Tensor, rope: tuple[torch.Tensor, ...], positions: torch.Tensor, cache: KVCache | None
    ) -> torch.Tensor:
        """rope: (cos, signed sin) for these positions, from ``RotaryTable.at``. Residual adds are fused
        into the output projections (``x + a·Wᵀ`` in one addmm)."""
        x = self.attention(rms_norm(x, self.input_norm, self.eps), rope, positions, cache, residual=x)
        return self.mlp(rms_norm(x, self.post_norm, self.eps), residual=x)

    def attention(
        self,
        x: torch.Tensor,
        rope: tuple[torch.Tensor, ...],
        positions: torch.Tensor,
        cache: KVCache | None,
        residual: torch.Tensor | None = None,
    ) -> torch.Tensor:
        count, d = x.shape[0], self.head_dim
        heads = self.qkv(x).view(count, -1, d).transpose(0, 1)  # [H + 2·H_kv, T, d]
        # split_with_sizes, not Tensor.split: the latter is a Python wrapper, measurable at this granularity
        qk, v = heads.split_with_sizes((self.num_heads + self.num_kv_heads, self.num_kv_heads))
        q, k = apply_rotary(qk, *rope).split_with_sizes((self.num_heads, self.num_kv_heads))  # q, k rotated at once
        if cache is None:
            keys, values, key_pos = k, v, positions
        else:
            keys, values, key_pos = cache.update(self.index, k, v)
            if count > 1 and keys.shape[1] == count:
                # A first prefill: attend to the fresh k/v, contiguous and exact (an int8 cache's decode
                # steps still read its rounded copy, as vLLM's quantized caches do).
                keys, values = k, v
        out = attend(q, keys, values, positions, key_pos, self.window, d**-0.5)
        return self.o_proj(out.transpose(0, 1).reshape(count, self.num_heads * d), residual)

    def mlp(self, x: torch.Tensor, residual: torch.Tensor | None = None) -> torch.Tensor:
        gate, up = self.gate_up(x).chunk(2, dim=-1)
        return self.down(F.silu(gate) * up, residual)
