"""The decoder layer's parts as plain tensor code: RMSNorm, GQA attention over a cache, SwiGLU MLP.

Weights are plain tensors (no nn.Module hooks on the hot path); q/k/v and gate/up projections are fused
into one matmul each at load time. GQA/MQA is native: torch's fused CPU attention kernel maps each
query head onto its group's KV head (``enable_gqa``); K and V are never repeated or copied. Attention is
masked by absolute positions (causal, plus the sliding window when the layer has one), so every cache kind
can hand back its keys in any order.
This module does not know where weights come from (``loader``) or how layers are stacked (``model``).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from kvcache.caches.base import KVCache
from kvcache.rope import apply_rotary


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """Normalised in fp32, cast back, then scaled: the same order of operations as transformers."""
    h = x if x.dtype == torch.float32 else x.float()
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    return weight * (h if x.dtype == torch.float32 else h.to(x.dtype))


def attend(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    q_pos: torch.Tensor,
    k_pos: torch.Tensor,
    window: int | None,
    scale: float,
) -> torch.Tensor:
    """q: [H, T, d]; k, v: [H_kv, n, d] → [H, T, d]. Query heads share their group's KV head (enable_gqa)."""
    count, keys = q.shape[1], k.shape[1]
    mask, causal = None, False
    if window is not None or count > 1:
        if window is None and count == keys:  # the keys are exactly these tokens: plain causal
            causal = True
        else:
            mask = k_pos.view(1, -1) <= q_pos.view(-1, 1)
            if window is not None:
                mask &= k_pos.view(1, -1) > q_pos.view(-1, 1) - window
    # One decode query attends to every cached key (all in its past): no mask at all.
    out = F.scaled_dot_product_attention(
        q[None], k[None], v[None], attn_mask=mask, is_causal=causal, scale=scale, enable_gqa=True
    )
    return out[0]


@dataclass
class DecoderLayer:
    index: int
    input_norm: torch.Tensor
    post_norm: torch.Tensor
    qkv_weight: torch.Tensor  # [(H + 2·H_kv)·d, hidden]
    qkv_bias: torch.Tensor | None
    o_weight: torch.Tensor
    gate_up_weight: torch.Tensor  # [2·intermediate, hidden]
    down_weight: torch.Tensor
    num_heads: int
    num_kv_heads: int
    head_dim: int
    window: int | None
    eps: float

    def forward(
        self, x: torch.Tensor, rope: tuple[torch.Tensor, ...], positions: torch.Tensor, cache: KVCache | None
    ) -> torch.Tensor:
        """rope: (cos, sin, rotation) for these positions, from ``RotaryTable``."""
        x = x + self.attention(rms_norm(x, self.input_norm, self.eps), rope, positions, cache)
        return x + self.mlp(rms_norm(x, self.post_norm, self.eps))

    def attention(
        self, x: torch.Tensor, rope: tuple[torch.Tensor, ...], positions: torch.Tensor, cache: KVCache | None
    ) -> torch.Tensor:
        count, d = x.shape[0], self.head_dim
        qkv = F.linear(x, self.qkv_weight, self.qkv_bias)
        q_size, kv_size = self.num_heads * d, self.num_kv_heads * d
        # q and k heads are rotated in one go, then split: fewer small ops per decode step.
        qk = apply_rotary(
            qkv[:, : q_size + kv_size].view(count, self.num_heads + self.num_kv_heads, d).transpose(0, 1), *rope
        )
        q, k = qk[: self.num_heads], qk[self.num_heads :]
        v = qkv[:, q_size + kv_size :].view(count, self.num_kv_heads, d).transpose(0, 1)
        if cache is None:
            keys, values, key_pos = k, v, positions
        else:
            keys, values, key_pos = cache.update(self.index, k, v)
        out = attend(q, keys, values, positions, key_pos, self.window, d**-0.5)
        return F.linear(out.transpose(0, 1).reshape(count, self.num_heads * d), self.o_weight)

    def mlp(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = F.linear(x, self.gate_up_weight).chunk(2, dim=-1)
        return F.linear(F.silu(gate) * up, self.down_weight)
