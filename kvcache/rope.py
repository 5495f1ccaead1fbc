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
        self.max_positions = max_positions
        # rotate_half(x) = x @ rotation: a signed permutation, exact in any dtype (one term per output).
        half = head_dim // 2
        rotation = torch.zeros(head_dim, head_dim)
        rotation[torch.arange(half) + half, torch.arange(half)] = -1.0
        rotation[torch.arange(half), torch.arange(half) + half] = 1.0
        self.rotation = rotation.to(dtype)

    def at(self, start: int, end: int) -> tuple[torch.Tensor, torch.Tensor]:
        """cos/sin for positions [start, end) (a sequence's new tokens are always consecutive)."""
        return self.cos[start:end], self.sin[start:end]


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, rotation: torch.Tensor) -> torch.Tensor:
    """x: [heads, T, d]; cos/sin: [T, d]; ``rotation`` from ``RotaryTable`` (x·cos + rotate_half(x)·sin)."""
    return torch.addcmul(x * cos, torch.matmul(x, rotation), sin)
