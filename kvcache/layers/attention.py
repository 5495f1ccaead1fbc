"""Attention kernels as plain tensor code: GQA-native, masked by absolute positions.

``attend``: any number of queries over one sequence's keys (torch's fused kernel for a prompt, two batched
matmuls for one query). ``attend_grouped``: one query token with its heads grouped per KV head (the decode
fast path). ``attend_padded``: one query for each of B sequences, each over its own keys, padded to one
length; padding and keys outside a sliding window get a bias of -inf: probability 0, adding exactly 0. Query head h
always reads KV head h // group, never a repeated copy. This module does not know where keys are stored
(``caches``, the paged pool) or which tokens a step holds (``context``).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def window_mask(q_pos: torch.Tensor, k_pos: torch.Tensor, window: int | None) -> torch.Tensor:
    """[T, n] bool: key visible to query (causal, and within ``window`` tokens when given)."""
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
        mask = None if window is None else window_mask(q_pos, k_pos, window)
        return attend_one(q, k, v, mask, scale)
    if k.stride(-1) != 1:  # token-minor cache views: the fused kernel is many times slower on them
        k, v = k.contiguous(), v.contiguous()
    causal = window is None and count == keys  # the keys are exactly these tokens: plain causal
    mask = None if causal else window_mask(q_pos, k_pos, window)
    if mask is not None and not q.is_cpu and q.shape[0] != k.shape[0]:
        return attend_masked_grouped(q, k, v, mask, scale)
    out = F.scaled_dot_product_attention(
        q[None], k[None], v[None], attn_mask=mask, is_causal=causal, scale=scale, enable_gqa=True
    )
    return out[0]


def attend_masked_grouped(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor, scale: float
) -> torch.Tensor:
    """``attend`` with a mask, GQA by grouping: each KV head's query heads become one longer query
    (q [H, T, d] → [H_kv, group · T, d], the mask repeated per head), so a fused kernel that takes a mask
    but not ``enable_gqa`` (memory-efficient attention on CUDA) still reads each KV head once."""
    heads, count, d = q.shape
    kv_heads = k.shape[0]
    group = heads // kv_heads
    grouped = q.reshape(kv_heads, group * count, d)
    out = F.scaled_dot_product_attention(
        grouped[None], k[None], v[None], attn_mask=mask.repeat(group, 1), scale=scale
    )
    return out[0].view(heads, count, d)


_ZERO: dict[tuple[torch.dtype, torch.device], torch.Tensor] = {}  # baddbmm's ignored addend


def _zero(like: torch.Tensor) -> torch.Tensor:
    zero = _ZERO.get((like.dtype, like.device))
    if zero is None:
        zero = _ZERO[(like.dtype, like.device)] = torch.zeros((), dtype=like.dtype, device=like.device)
    return zero


def _softmax(scores: torch.Tensor) -> torch.Tensor:
    if scores.dtype == torch.float32:
        return torch.softmax(scores, dim=-1)
    return torch.softmax(scores, dim=-1, dtype=torch.float32).to(scores.dtype)  # half: normalise in fp32


def attend_one(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None, scale: float
) -> torch.Tensor:
    """One query token: q [H, 1, d], k/v [H_kv, n, d] → [H, 1, d]; query head h reads KV head h // group.

    A decode query comes after every cached key, so only a sliding window needs a mask ([1, n] bool).
    """
    heads, kv_heads, d = q.shape[0], k.shape[0], q.shape[-1]
    return attend_grouped(q.reshape(kv_heads, heads // kv_heads, d), k, v, mask, scale).view(heads, 1, d)


def attend_grouped(
    grouped: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None,
    scale: float,
    out: torch.Tensor | None = None,
) -> torch.Tensor:
    """``attend_one`` with the query heads already grouped per KV head: [H_kv, group, d] → [H_kv, group, d]
    (into ``out`` when given)."""
    # [H_kv, group, n]; the scale as BLAS's alpha (beta=0: the zero addend is ignored), not a second kernel
    scores = torch.baddbmm(_zero(grouped), grouped, k.transpose(1, 2), beta=0, alpha=scale)
    if mask is not None:
        scores.masked_fill_(~mask, float("-inf"))
    return torch.bmm(_softmax(scores), v, out=out)


def attend_padded(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor, scale: float
) -> torch.Tensor:
    """One query for each of B sequences: q [H, B, d]; k, v [H_kv, B, n, d] (each row's keys padded to n);
    bias [B, n] (0 visible, -inf padding or outside the window; every row sees at least its own key)
    → [H, B, d]. Three kernels for the whole batch, whatever B."""
    heads, batch, d = q.shape
    kv_heads, n = k.shape[0], k.shape[2]
    group = heads // kv_heads
    grouped = q.view(kv_heads, group, batch, d).transpose(1, 2).reshape(kv_heads * batch, group, d)
    keys, values = k.reshape(kv_heads * batch, n, d), v.reshape(kv_heads * batch, n, d)
    scores = torch.baddbmm(_zero(q), grouped, keys.transpose(1, 2), beta=0, alpha=scale)
    scores.view(kv_heads, batch, group, n).add_(bias.view(1, batch, 1, n))
    out = torch.bmm(_softmax(scores), values)  # [H_kv·B, group, d]
    return out.view(kv_heads, batch, group, d).transpose(1, 2).reshape(heads, batch, d)
