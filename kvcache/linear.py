"""One projection ``y = x · Wᵀ + b``, with W stored in the layout a one-token decode step reads fastest.

A decode step multiplies one row by every weight matrix, so its speed is how fast the BLAS matrix-vector
kernel streams the weights from memory. Measured on the reference machine (MKL, AVX2, one thread, weights
larger than L3), a wide matrix (more outputs than inputs: fused q/k/v, fused gate/up, the LM head) streams
about twice as fast stored input-major ``[in, out]`` (``x @ Wᵀ`` reads whole contiguous output rows) as in
the checkpoint's ``[out, in]``; a tall one (``down_proj``) is faster as stored. So wide matrices are
transposed once at load time; square and tall ones keep the checkpoint layout. The result is the same
product (only the summation order, i.e. the last bits, can differ). The loader places all matrices in
one huge-page ``Arena``. This module does not fuse or load weights (see ``loader``).
"""

from __future__ import annotations

import torch

from kvcache.hugepages import Arena


class Projection:
    __slots__ = ("stored", "bias", "input_major", "_right")

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

    @property
    def weight(self) -> torch.Tensor:
        """The ``[out, in]`` matrix (a view; no copy)."""
        return self.stored.t() if self.input_major else self.stored

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
