"""Rotary position embeddings: inverse frequencies (default, linear, llama3 scaling) and cos/sin tables.

Matches transformers' "rotate half" convention: cos/sin are computed in fp32 and cast to the compute
dtype, so fp32 logits agree with transformers to rounding. It does not apply attention itself.
"""

from __future__ import annotations

import math

import torch

from kvcache.config import RopeConfig


def inverse_frequencies(rope: RopeConfig, head_dim: int) -> torch.Tensor:
    inv_freq = 1.0 / (rope.theta ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))
    if rope.rope_type == "linear":
        return inv_freq / rope.factor
    if rope.rope_type == "llama3":
        return _llama3(inv_freq, rope)
    return inv_freq


def _llama3(inv_freq: torch.Tensor, rope: RopeConfig) -> torch.Tensor:
    # Long wavelengths are slowed by `factor`, short ones kept, the band between interpolated smoothly.
    old_ctx = rope.original_max_position_embeddings
    low_wavelen = old_ctx / rope.low_freq_factor
    high_wavelen = old_ctx / rope.high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    scaled = torch.where(wavelen > low_wavelen, inv_freq / rope.factor, inv_freq)
    smooth = (old_ctx / wavelen - rope.low_freq_factor) / (rope.high_freq_factor - rope.low_freq_factor)
    smoothed = (1 - smooth) * scaled / rope.factor + smooth * scaled
    medium = (wavelen >= high_wavelen) & (wavelen <= low_wavelen)
    return torch.where(medium, smoothed, scaled)


class RotaryTable:
    """cos/sin for positions [0, max_positions), built once; ``at(start, end)`` slices them."""

    def __init__(self, rope: RopeConfig, head_dim: int, max_positions: int, dtype: torch.dtype):
        inv_freq = inverse_frequencies(rope, head_dim)
        freqs = torch.outer(torch.arange(max_positions, dtype=torch.float32), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.cos = emb.cos().to(dtype)
        self.sin = emb.sin().to(dtype)
        # rotate_half(x)·sin == roll(x, d/2)·signed_sin with the first half of sin negated: exact in any
        # dtype (negation commutes with rounding), and one op instead of slice + negate + cat.
        half = head_dim // 2
        self.signed_sin = torch.cat((-self.sin[:, :half], self.sin[:, half:]), dim=-1)
        self.max_positions = max_positions

    def at(self, start: int, end: int) -> tuple[torch.Tensor, torch.Tensor]:
        """cos and signed sin for positions [start, end) (a sequence's new tokens are always consecutive)."""
        return self.cos[start:end], self.signed_sin[start:end]


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, signed_sin: torch.Tensor) -> torch.Tensor:
    """x: [heads, T, d]; cos/signed_sin: [T, d] from ``RotaryTable.at`` → x·cos + rotate_half(x)·sin."""
    return torch.addcmul(x * cos, x.roll(x.shape[-1] // 2, dims=-1), signed_sin)
