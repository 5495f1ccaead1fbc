"""Models of real shapes with random weights, made on the device from a fixed seed: nothing downloads.

A shape is a calculator preset of ``analyzer.kv`` (layers, KV heads, head size and query heads come from
there, the numbers ``prefixgate kv`` uses) plus what the calculator does not carry: hidden and MLP sizes,
vocabulary, RoPE, tied embeddings, biases, a sliding window (each from the model's ``config.json``). A few
shapes the calculator has no preset for (``llama-3.2-1b``, and ``demo``/``tiny`` for the CPU) are complete
here. The weights are for speed and agreement tests only: their text is gibberish. Gemma's architecture
is not the engine's; its preset is refused by name. It does not build the ``Model`` (``models.build``).
"""

from __future__ import annotations

import zlib
from typing import Any

import torch

import analyzer.kv as kv
from kvcache.config import ModelConfig
from kvcache.errors import UnsupportedModelError

_LLAMA3 = {"vocab_size": 128256, "rope_theta": 500000.0}
_LLAMA31_ROPE = {
    "rope_type": "llama3",
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
}
# name → config.json fields beyond the calculator's (presets) or all of them (engine-only shapes)
EXTRAS: dict[str, dict[str, Any]] = {
    # the Llama 3.1 8B config (same weights' and KV's shapes as 3.0, a 128K context: room for 8k prefixes)
    "llama-3-8b": {
        **_LLAMA3,
        "intermediate_size": 14336,
        "max_position_embeddings": 131072,
        "rope_scaling": _LLAMA31_ROPE,
    },
    "llama-3-70b": {**_LLAMA3, "intermediate_size": 28672, "max_position_embeddings": 8192},
    "llama-3-70b-mha": {**_LLAMA3, "intermediate_size": 28672, "max_position_embeddings": 8192},
    "llama-3.1-405b": {
        **_LLAMA3,
        "intermediate_size": 53248,
        "max_position_embeddings": 131072,
        "rope_scaling": _LLAMA31_ROPE,
    },
    "llama-2-7b": {"vocab_size": 32000, "intermediate_size": 11008, "max_position_embeddings": 4096},
    "mistral-7b": {
        "model_type": "mistral",
        "vocab_size": 32000,
        "intermediate_size": 14336,
        "max_position_embeddings": 32768,
        "sliding_window": 4096,
    },
    "qwen2.5-7b": {
        "model_type": "qwen2",
        "vocab_size": 152064,
        "intermediate_size": 18944,
        "max_position_embeddings": 32768,
        "rope_theta": 1e6,
    },
    "qwen2.5-72b": {
        "model_type": "qwen2",
        "vocab_size": 152064,
        "intermediate_size": 29568,
        "max_position_embeddings": 32768,
        "rope_theta": 1e6,
    },
}
OWN: dict[str, dict[str, Any]] = {  # shapes the calculator has no preset for: complete here
    "llama-3.2-1b": {
        **_LLAMA3,
        "num_hidden_layers": 16,
        "num_key_value_heads": 8,
        "head_dim": 64,
        "num_attention_heads": 32,
        "hidden_size": 2048,
        "intermediate_size": 8192,
        "max_position_embeddings": 131072,
        "tie_word_embeddings": True,
        "rope_scaling": {**_LLAMA31_ROPE, "factor": 32.0},
    },
    "demo": {  # the demo checkpoint's shape (kvcache.demo)
        "num_hidden_layers": 6,
        "num_key_value_heads": 2,
        "head_dim": 64,
        "num_attention_heads": 6,
        "hidden_size": 384,
        "intermediate_size": 1024,
        "vocab_size": 4096,
        "max_position_embeddings": 16384,
        "rope_theta": 500000.0,
    },
    "tiny": {
        "num_hidden_layers": 2,
        "num_key_value_heads": 2,
        "head_dim": 32,
        "num_attention_heads": 4,
        "hidden_size": 128,
        "intermediate_size": 256,
        "vocab_size": 512,
        "max_position_embeddings": 16384,
        "rope_theta": 10000.0,
        "rope_scaling": {**_LLAMA31_ROPE, "original_max_position_embeddings": 1024},  # llama3 RoPE, exercised
    },
}


def shape_names() -> list[str]:
    return sorted(set(EXTRAS) | set(OWN))


def shape_dict(name: str) -> dict[str, Any]:
    """The shape's ``config.json`` as a dict (calculator terms from ``analyzer.kv``, the rest from here)."""
    key = name.strip().lower()
    if key in OWN:
        fields = dict(OWN[key])
    else:
        try:
            preset = kv.find_preset(key)
        except ValueError:
            raise UnsupportedModelError(
                f"unknown shape {name!r}; known: {', '.join(shape_names())}"
            ) from None
        if preset.name not in EXTRAS:
            raise UnsupportedModelError(
                f"shape {preset.name!r}: its architecture is not Llama-family (known: {', '.join(shape_names())})"
            )
        fields = {
            "num_hidden_layers": preset.layers,
            "num_key_value_heads": preset.kv_heads,
            "head_dim": preset.head_dim,
            "num_attention_heads": preset.query_heads,
            "hidden_size": preset.query_heads * preset.head_dim,
            **EXTRAS[preset.name],
        }
        key = preset.name
    model_type = fields.pop("model_type", "llama")
    return {
        "architectures": [f"{model_type.capitalize()}ForCausalLM"],
        "model_type": model_type,
        "hidden_act": "silu",
        "rms_norm_eps": 1e-5,
        "tie_word_embeddings": False,
        "attention_bias": model_type == "qwen2",
        "bos_token_id": 0,
        "eos_token_id": 1,
        "prefixgate_shape": key,
        **fields,
    }


def shape_config(name: str) -> ModelConfig:
    return ModelConfig.from_dict(shape_dict(name))


def tensor_shapes(config: ModelConfig) -> dict[str, tuple[int, ...]]:
    """Every tensor of a Hugging Face Llama-family checkpoint of this config, by name."""
    c, d = config, config.head_dim
    out: dict[str, tuple[int, ...]] = {
        "model.embed_tokens.weight": (c.vocab_size, c.hidden_size),
        "model.norm.weight": (c.hidden_size,),
    }
    if not c.tie_word_embeddings:
        out["lm_head.weight"] = (c.vocab_size, c.hidden_size)
    for i in range(c.num_layers):
        p = f"model.layers.{i}."
        out |= {
            p + "self_attn.q_proj.weight": (c.num_heads * d, c.hidden_size),
            p + "self_attn.k_proj.weight": (c.num_kv_heads * d, c.hidden_size),
            p + "self_attn.v_proj.weight": (c.num_kv_heads * d, c.hidden_size),
            p + "self_attn.o_proj.weight": (c.hidden_size, c.num_heads * d),
            p + "mlp.gate_proj.weight": (c.intermediate_size, c.hidden_size),
            p + "mlp.up_proj.weight": (c.intermediate_size, c.hidden_size),
            p + "mlp.down_proj.weight": (c.hidden_size, c.intermediate_size),
            p + "input_layernorm.weight": (c.hidden_size,),
            p + "post_attention_layernorm.weight": (c.hidden_size,),
        }
        if c.attention_bias:
            out |= {
                p + "self_attn.q_proj.bias": (c.num_heads * d,),
                p + "self_attn.k_proj.bias": (c.num_kv_heads * d,),
                p + "self_attn.v_proj.bias": (c.num_kv_heads * d,),
            }
    return out


def random_weights(
    config: ModelConfig, device: torch.device | str, dtype: torch.dtype, seed: int = 0
) -> dict[str, torch.Tensor]:
    """Every tensor, made on ``device`` in ``dtype``; each from its own seed (``seed`` and its name), so
    the same call gives the same weights on the same device. Scaled as the demo's (``kvcache.demo``):
    rows of unit RMS through each layer, residual branches at 0.3, a sharpened LM head."""
    device = torch.device(device)
    out = {}
    for name, shape in tensor_shapes(config).items():
        if name.endswith("norm.weight"):
            out[name] = torch.ones(shape, device=device, dtype=dtype)
            continue
        gen = torch.Generator(device=device).manual_seed(seed * 1_000_003 + zlib.crc32(name.encode()))
        values = torch.randn(shape, generator=gen, device=device, dtype=torch.float32)
        if name.endswith(".bias"):
            values *= 0.02
        elif name != "model.embed_tokens.weight":
            values /= shape[-1] ** 0.5
            if name.endswith(("o_proj.weight", "down_proj.weight")):
                values *= 0.3
            elif name == "lm_head.weight":
                values *= 4.0
        out[name] = values.to(dtype)
        del values
    return out
