"""RMSNorm as plain tensor code, in transformers' order of operations, plus the one-row forms a CPU decode
step uses (the scale left to the next projection's alpha, read on the host). Off the CPU nothing here
reads a value back (CUDA graphs can capture it). It holds no weights."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """Normalised in fp32, cast back, then scaled: the same order of operations as transformers."""
    if x.dtype == torch.float32:
        if x.shape[0] == 1 and x.is_cpu:  # one row: a dot product, two scalings (a third fewer kernels)
            return torch.mul(x, weight).mul_(row_rms_scale(x.view(-1), eps))
        return F.rms_norm(x, weight.shape, weight, eps)  # bit-identical to the three-step form in fp32
    h = x.float()
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    return weight * h.to(x.dtype)


def row_rms_scale(row: torch.Tensor, eps: float) -> float:
    """1 / rms of a 1-D fp32 row, as a Python float (one dot product)."""
    return 1.0 / math.sqrt(float(torch.dot(row, row)) / row.shape[0] + eps)


def normed_row(
    x: torch.Tensor, row: torch.Tensor, weight: torch.Tensor, eps: float
) -> tuple[torch.Tensor, float]:
    """A one-row RMSNorm left unscaled: ``(x·weight, s)`` with ``rms_norm(x) == s · x·weight``, so the next
    projection applies ``s`` as its alpha (``Projection.scaled``); ``row`` is ``x`` viewed 1-D. Half
    precision normalises fully (s = 1), keeping transformers' fp32-then-cast order."""
    if x.dtype == torch.float32:
        return torch.mul(x, weight), row_rms_scale(row, eps)
    return rms_norm(x, weight, eps), 1.0
