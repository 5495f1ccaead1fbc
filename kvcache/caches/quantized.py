"""An int8 KV cache: every key and value vector is stored as int8 with one scale per token and KV head.

``x ≈ q · scale`` with ``scale = max|x| / 127`` (an fp16 number) over the head dimension, so the stored
K/V data is exactly 2 · L · H_kv · d · n · 1 byte (half of fp16), plus one fp16 scale per token, head,
and K or V (reported separately as ``extra_nbytes``). Reads dequantize into the compute dtype. Unlike the
other caches this one changes the output slightly; it does not bound that error itself (the tests measure
it). ``Int8Cache`` holds one sequence; ``Int8BlockPool`` is the engine's paged pool in int8
(``prefixgate local --kv-cache int8``).
"""

from __future__ import annotations

import torch

from kvcache.caches.base import KVCache
from kvcache.caches.blocks import BlockManager
from kvcache.caches.paged import BlockPool, empty_on
from kvcache.config import ModelConfig

FP16 = torch.finfo(torch.float16)


def quantize(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """x: [..., d] → (int8 [..., d], fp16 scale [..., 1]) with per-vector absmax scaling.

    The scale is rounded to fp16 *before* dividing, so what is stored is what the values were quantized
    with (every value within half a step of its original), and it is kept within fp16's normal range:
    a tiny vector gets the smallest normal fp16 scale instead of one that underflows to 0."""
    absmax = x.abs().amax(dim=-1, keepdim=True).float()
    scale = (absmax / 127.0).clamp(min=FP16.tiny, max=FP16.max).to(torch.float16)
    q = torch.round(x.float() / scale.float()).clamp(-127, 127).to(torch.int8)
    return q, scale


def dequantize(q: torch.Tensor, scale: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    return (q.float() * scale.float()).to(dtype)


class Int8Cache(KVCache):
    bytes_per_value = 1

    def __init__(self, config: ModelConfig, capacity: int, dtype: torch.dtype = torch.float32):
        super().__init__(config, capacity)
        self.dtype = dtype
        shape = (config.num_layers, config.num_kv_heads, capacity, config.head_dim)
        scale_shape = shape[:-1] + (1,)
        self.k = torch.empty(shape, dtype=torch.int8)
        self.v = torch.empty(shape, dtype=torch.int8)
        self.k_scale = torch.empty(scale_shape, dtype=torch.float16)
        self.v_scale = torch.empty(scale_shape, dtype=torch.float16)
        self.positions = torch.arange(capacity)

    def update(
        self, layer: int, k: torch.Tensor, v: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        start, end = self.length, self.length + k.shape[1]
        self.k[layer, :, start:end], self.k_scale[layer, :, start:end] = quantize(k)
        self.v[layer, :, start:end], self.v_scale[layer, :, start:end] = quantize(v)
        keys = dequantize(self.k[layer, :, :end], self.k_scale[layer, :, :end], self.dtype)
        values = dequantize(self.v[layer, :, :end], self.v_scale[layer, :, :end], self.dtype)
        return keys, values, self.positions[:end]

    @property
    def nbytes(self) -> int:
        return self.k.nbytes + self.v.nbytes

    @property
    def extra_nbytes(self) -> int:
        return self.k_scale.nbytes + self.v_scale.nbytes


class Int8BlockPool(BlockPool):
    """A paged pool storing int8 K/V with one fp16 scale per token and KV head (``--kv-cache int8``): the
    same slots, block manager and prefix sharing as ``BlockPool``, at half of fp16's bytes. ``write``
    quantizes, ``gather`` dequantizes into the compute dtype. Only the engine's batches read it (a
    ``PagedCache`` working copy needs full-precision pool slots)."""

    def __init__(
        self,
        config: ModelConfig,
        num_blocks: int,
        block_size: int = 16,
        dtype: torch.dtype = torch.float32,
        device: torch.device | str = "cpu",
    ):
        self.config, self.block_size, self.dtype = config, block_size, dtype
        self.manager = BlockManager(num_blocks, block_size)
        self.num_slots = self.pad_slot = num_blocks * block_size
        self.device = torch.device(device)
        kv_heads = config.num_kv_heads
        shape = (config.num_layers, 2 * kv_heads, self.num_slots + 1, config.head_dim)
        self.kv = empty_on(shape, torch.int8, self.device)
        self.scale = torch.zeros(shape[:-1] + (1,), dtype=torch.float16, device=self.device)
        self.kv[:, :, self.pad_slot].zero_()
        self.k = self.kv[:, :kv_heads, : self.num_slots].transpose(1, 2)
        self.v = self.kv[:, kv_heads:, : self.num_slots].transpose(1, 2)

    @property
    def extra_nbytes(self) -> int:
        return self.scale[:, :, : self.num_slots].nbytes

    def write(self, layer: int, slots: torch.Tensor, kv: torch.Tensor) -> None:
        q, scale = quantize(kv)
        self.kv[layer].index_copy_(1, slots, q)
        self.scale[layer].index_copy_(1, slots, scale)

    def gather(self, layer: int, slots: torch.Tensor) -> torch.Tensor:
        return dequantize(
            self.kv[layer].index_select(1, slots), self.scale[layer].index_select(1, slots), self.dtype
        )

    def sequence(self, capacity: int):
        raise ValueError(
            "an int8 pool serves the engine's batches only; use a full-precision BlockPool for PagedCache"
        )
