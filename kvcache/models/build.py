"""A ``ModelConfig`` plus a source of named tensors → a ``Model`` on a device, in a dtype.

The source is any ``get(name, shape)`` (and ``has(name)``) in Hugging Face's tensor names: a checkpoint's
safetensors (``utils.loader``) or random weights made on the device (``models.shapes``). It fuses q/k/v
and gate/up and ties the LM head to the embedding when the config says so. On the CPU every matrix a
decode step streams goes into one huge-page ``Arena``, wide ones stored input-major (docs/engine.md); on a
GPU they stay ``[out, in]`` in device memory (cuBLAS reads either). It does not read files or check shapes
against a checkpoint (the source does).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from kvcache.config import ModelConfig
from kvcache.errors import ModelFilesError
from kvcache.layers.decoder import DecoderLayer
from kvcache.layers.linear import Projection
from kvcache.layers.rotary import RotaryTable
from kvcache.models.llama import Model
from kvcache.utils.hugepages import Arena

Getter = Callable[[str, tuple[int, ...]], torch.Tensor]


def build_model(
    config: ModelConfig,
    get: Getter,
    has: Callable[[str], bool],
    dtype: torch.dtype,
    device: torch.device | str = "cpu",
    max_context: int | None = None,
) -> Model:
    device = torch.device(device)
    c = config
    hidden, d, inter = c.hidden_size, c.head_dim, c.intermediate_size
    tied = c.tie_word_embeddings or not has("lm_head.weight")
    if tied and not c.tie_word_embeddings:
        raise ModelFilesError("checkpoint lacks the tensor 'lm_head.weight' and tie_word_embeddings is false")

    def tensor(name: str, shape: tuple[int, ...]) -> torch.Tensor:
        return get(name, shape).to(device=device, dtype=dtype).contiguous()

    on_cpu = device.type == "cpu"
    arena = None
    if (
        on_cpu
    ):  # every matrix a decode step streams, in one huge-page arena (the LM head: the embedding if tied)
        per_layer = [
            ((c.num_heads + 2 * c.num_kv_heads) * d, hidden),
            (hidden, c.num_heads * d),
            (2 * inter, hidden),
        ]
        shapes = (per_layer + [(hidden, inter)]) * c.num_layers + [(c.vocab_size, hidden)]
        arena = Arena.for_shapes(shapes, dtype)

    def projection(weight: torch.Tensor, bias: torch.Tensor | None = None) -> Projection:
        return (
            Projection(weight, bias, arena=arena) if on_cpu else Projection(weight, bias, input_major=False)
        )

    embed = tensor("model.embed_tokens.weight", (c.vocab_size, hidden))
    if tied and arena is not None:
        embed = arena.take(tuple(embed.shape), dtype).copy_(embed)
    layers = []
    for i in range(c.num_layers):
        p = f"model.layers.{i}."
        qkv = [
            tensor(p + "self_attn.q_proj.weight", (c.num_heads * d, hidden)),
            tensor(p + "self_attn.k_proj.weight", (c.num_kv_heads * d, hidden)),
            tensor(p + "self_attn.v_proj.weight", (c.num_kv_heads * d, hidden)),
        ]
        bias = None
        if c.attention_bias:
            bias = torch.cat(
                [
                    tensor(p + "self_attn.q_proj.bias", (c.num_heads * d,)),
                    tensor(p + "self_attn.k_proj.bias", (c.num_kv_heads * d,)),
                    tensor(p + "self_attn.v_proj.bias", (c.num_kv_heads * d,)),
                ]
            )
        gate_up = [
            tensor(p + "mlp.gate_proj.weight", (inter, hidden)),
            tensor(p + "mlp.up_proj.weight", (inter, hidden)),
        ]
        layers.append(
            DecoderLayer(
                index=i,
                input_norm=tensor(p + "input_layernorm.weight", (hidden,)),
                post_norm=tensor(p + "post_attention_layernorm.weight", (hidden,)),
                qkv=projection(torch.cat(qkv), bias),
                o_proj=projection(tensor(p + "self_attn.o_proj.weight", (hidden, c.num_heads * d))),
                gate_up=projection(torch.cat(gate_up)),
                down=projection(tensor(p + "mlp.down_proj.weight", (hidden, inter))),
                num_heads=c.num_heads,
                num_kv_heads=c.num_kv_heads,
                head_dim=d,
                window=c.layer_windows[i],
                eps=c.rms_norm_eps,
            )
        )
        del qkv, gate_up  # on a GPU: the unfused copies go before the next layer's arrive
    if tied:
        head = Projection(embed, input_major=False)  # shares the embedding's memory: no transposed copy
    else:
        head = projection(tensor("lm_head.weight", (c.vocab_size, hidden)))
    context = min(max_context or c.max_position_embeddings, c.max_position_embeddings)
    rotary = RotaryTable(c.rope, d, context, dtype)
    rotary.cos, rotary.sin = rotary.cos.to(device), rotary.sin.to(device)
    rotary.signed_sin = rotary.signed_sin.to(device)
    return Model(
        config=c,
        dtype=dtype,
        embed=embed,
        layers=layers,
        final_norm=tensor("model.norm.weight", (hidden,)),
        head=head,
        rotary=rotary,
    )
