"""One projection ``y = x · Wᵀ + b``, with W stored in the layout a one-token decode step reads fastest.

Wide matrices (more outputs than inputs: fused q/k/v, fused gate/up, the LM head) are transposed once at
load time to input-major ``[in, out]``; square and tall ones keep the checkpoint's ``[out, in]``. The
result is the same product (only the summation order, the last bits, can differ); the measurements
behind the choice are in docs/engine.md. The loader places all matrices in one huge-page ``Arena``.
This module does not fuse or load weights (see ``utils.loader``).
"""

from __future__ import annotations

import torch

from kvcache.utils.hugepages import Arena


class Projection:
    __slots__ = ("stored", "bias", "input_major", "_right", "_beta", "_addend")

    def __init__(
        self,
        weight: torch.Tensor,
        bias: torch.Tensor | None = None,
        input_major: bool | None = None,
        arena: Arena | None = None,
    ):
        """weight: ``[out, in]`` as in the checkpoint; ``input_major`` None picks by shape (wide → transposed);
        ``arena``: where to store the matrix (huge pages), instead of a tensor of its own."""
        if weight.dim() != 2:
            raise ValueError(f"a projection weight must be 2-D, got shape {tuple(weight.shape)}")
        if input_major is None:
            input_major = weight.shape[0] > weight.shape[1]
        self.input_major = input_major
        source = weight.t() if input_major else weight
        if arena is not None:
            self.stored = arena.take(tuple(source.shape), source.dtype).copy_(source)
        else:
            self.stored = source.contiguous()
        self.bias = bias
        self._right = self.stored if input_major else self.stored.t()  # the mm's right operand, [in, out]
        # ``scaled``'s addend: the bias, or a zero that beta=0 makes addmm ignore
        self._beta = 0 if bias is None else 1
        self._addend = (
            torch.zeros((), dtype=self.stored.dtype, device=self.stored.device) if bias is None else bias
        )

    @property
    def weight(self) -> torch.Tensor:
        """The ``[out, in]`` matrix (a view; no copy)."""
        return self.stored.t() if self.input_major else self.stored

    @property
    def out_features(self) -> int:
        return self._right.shape[1]

    @property
    def nbytes(self) -> int:
        return self.stored.nbytes + (self.bias.nbytes if self.bias is not None else 0)

    def __call__(self, x: torch.Tensor, residual: torch.Tensor | None = None) -> torch.Tensor:
        """x: ``[tokens, in]`` → ``[tokens, out]``; with ``residual`` (no bias), ``residual + x·Wᵀ`` in one addmm."""
        weight = self._right
        if residual is not None:
            if self.bias is not None:
                raise ValueError("a projection with a bias cannot also take a residual")
            return torch.addmm(residual, x, weight)
        if self.bias is not None:
            return torch.addmm(self.bias, x, weight)
        return torch.mm(x, weight)

    def add_into(self, residual: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """``residual += x·Wᵀ`` in place (one addmm, no new tensor); returns ``residual``."""
        if self.bias is not None:
            raise ValueError("a projection with a bias cannot also take a residual")
        return residual.addmm_(x, self._right)

    def scaled(self, x: torch.Tensor, scale: float, out: torch.Tensor | None = None) -> torch.Tensor:
        """``scale · x·Wᵀ (+ b)`` in one addmm (into ``out`` when given): a row's RMSNorm factor rides along
        as BLAS's alpha (a decode step's norm then needs no separate scaling kernel)."""
        return torch.addmm(self._addend, x, self._right, beta=self._beta, alpha=scale, out=out)
