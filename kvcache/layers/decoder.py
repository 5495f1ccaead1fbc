"""One decoder layer as plain tensor code: GQA attention over a cache, then a SwiGLU MLP.

``forward`` takes any rows of tokens (a prompt, a prompt chunk, or one token from each of many sequences)
and leaves storing K/V and attending to the ``cache`` argument's ``attend`` (a ``KVCache`` for one
sequence, a ``context.StepContext`` for an engine step over the paged pool); ``decode`` is the fast path
for a step of exactly one token, for either, with its scratch in ``DecodeBuffers``. Weights are
``Projection``s with q/k/v and gate/up fused. Why the decode path looks as it does: docs/engine.md.
It does not know where weights come from (``utils.loader``) or how layers are stacked (``models``).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from kvcache.caches.base import KVCache
from kvcache.layers.attention import attend, attend_grouped, window_mask
from kvcache.layers.linear import Projection
from kvcache.layers.norm import normed_row, rms_norm
from kvcache.layers.rotary import apply_rotary


class DecodeBuffers:
    """One sequence's scratch for decode steps: the fused q/k/v and gate/up outputs and the attention
    output, with every view of them made once (a decode step then slices nothing). Layers run one after
    another and all have the config's shapes, so one set serves every layer of a model; it belongs to a
    cache (one sequence), never to the model, so sequences on other threads never share it."""

    __slots__ = ("qkv", "qk", "q", "kv", "gate_up", "gate", "up", "attn", "attn_row")

    def __init__(self, layer: DecoderLayer, dtype: torch.dtype):
        heads, kv_heads, d = layer.num_heads, layer.num_kv_heads, layer.head_dim
        self.qkv = torch.empty(1, (heads + 2 * kv_heads) * d, dtype=dtype)
        fused = self.qkv.view(-1, 1, d)  # [H + 2·H_kv, 1, d]
        self.qk = fused[: heads + kv_heads]  # rotated in place
        self.q = fused[:heads].view(kv_heads, heads // kv_heads, d)  # grouped per KV head
        self.kv = fused[heads:]  # K heads then V heads, as ``KVCache.update_kv`` takes them
        inter = layer.gate_up.out_features // 2
        self.gate_up = torch.empty(1, 2 * inter, dtype=dtype)
        self.gate, self.up = self.gate_up[:, :inter], self.gate_up[:, inter:]
        self.attn = torch.empty(kv_heads, heads // kv_heads, d, dtype=dtype)
        self.attn_row = self.attn.view(1, heads * d)


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
        q, k = apply_rotary(qk, *rope).split_with_sizes(
            (self.num_heads, self.num_kv_heads)
        )  # q, k rotated at once
        if cache is None:
            out = attend(q, k, v, positions, positions, self.window, d**-0.5)
        else:  # the cache stores k/v and attends (one sequence's cache, or a batch over the paged pool)
            out = cache.attend(self.index, q, k, v, positions, self.window, d**-0.5)
        return self.o_proj(out.transpose(0, 1).reshape(count, self.num_heads * d), residual)

    def decode(
        self,
        x: torch.Tensor,
        row: torch.Tensor,
        rope: tuple[torch.Tensor, ...],
        positions: torch.Tensor,
        cache: KVCache,
        buffers: DecodeBuffers,
    ) -> None:
        """One new token over a cache, updating the residual stream ``x [1, hidden]`` in place (``row``: it
        viewed 1-D). The same math as ``forward`` in fewer kernels (besides the weight matmuls a decode
        step is mostly per-kernel overhead): the norms' scale rides in the next matmul's alpha, the residual
        adds go straight into ``x``, outputs land in ``buffers`` whose views exist already, SwiGLU runs in
        place."""
        h, s = normed_row(x, row, self.input_norm, self.eps)
        self.qkv.scaled(h, s, out=buffers.qkv)
        qk, (cos, signed_sin) = buffers.qk, rope
        # RoPE in place (the same products as ``apply_rotary``): K and V stay adjacent, stored in one copy
        rotated_half = qk.roll(self.head_dim // 2, dims=-1)  # before qk is overwritten
        qk.mul_(cos).addcmul_(rotated_half, signed_sin)
        keys, values, key_pos = cache.update_kv(self.index, buffers.kv)
        mask = None if self.window is None else window_mask(positions, key_pos, self.window)
        attend_grouped(buffers.q, keys, values, mask, self.head_dim**-0.5, out=buffers.attn)
        self.o_proj.add_into(x, buffers.attn_row)
        h, s = normed_row(x, row, self.post_norm, self.eps)
        self.gate_up.scaled(h, s, out=buffers.gate_up)
        self.down.add_into(x, F.silu(buffers.gate, inplace=True).mul_(buffers.up))

    def mlp(self, x: torch.Tensor, residual: torch.Tensor | None = None) -> torch.Tensor:
        gate, up = self.gate_up(x).chunk(2, dim=-1)
        return self.down(F.silu(gate) * up, residual)
