"""Hugging Face checkpoint folder → ``Model``: safetensors (single file or sharded with an index).

Reads ``config.json`` (via ``ModelConfig``), ``model.safetensors`` or ``model.safetensors.index.json`` and
its shards, casts to the requested dtype, fuses q/k/v and gate/up (each stored in the layout
``Projection`` reads fastest, all in one huge-page ``Arena``), and ties the LM head to the embedding when
the checkpoint says so (tied checkpoints have no ``lm_head.weight``). Every missing file or tensor is
reported by name as a ``ModelFilesError``. It does not load tokenizers or download anything.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open

from kvcache.config import ModelConfig
from kvcache.errors import ModelFilesError
from kvcache.layers.decoder import DecoderLayer
from kvcache.layers.linear import Projection
from kvcache.layers.rotary import RotaryTable
from kvcache.models.llama import Model
from kvcache.utils.dtypes import resolve_dtype
from kvcache.utils.hugepages import Arena


def weight_files(folder: Path) -> dict[str, Path]:
    """tensor name → the safetensors file holding it."""
    index = folder / "model.safetensors.index.json"
    single = folder / "model.safetensors"
    if index.is_file():
        try:
            weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ModelFilesError(f"{index}: not a valid safetensors index ({exc})") from None
        mapping = {name: folder / shard for name, shard in weight_map.items()}
        for shard in sorted(set(mapping.values())):
            if not shard.is_file():
                raise ModelFilesError(f"{shard}: missing weight shard named in {index.name}")
        return mapping
    files = [single] if single.is_file() else sorted(folder.glob("*.safetensors"))
    if not files:
        bins = sorted(p.name for p in folder.glob("*.bin"))
        hint = f" (found {', '.join(bins)}: convert it to safetensors)" if bins else ""
        raise ModelFilesError(f"{folder}: missing model.safetensors (or a sharded index){hint}")
    mapping: dict[str, Path] = {}
    for path in files:
        with _open(path) as handle:
            mapping.update({name: path for name in handle.keys()})
    return mapping


def _open(path: Path):
    try:
        return safe_open(str(path), framework="pt")
    except (SafetensorError, OSError) as exc:
        raise ModelFilesError(f"{path}: cannot read safetensors file ({exc})") from None


class _Tensors:
    def __init__(self, mapping: dict[str, Path], dtype: torch.dtype):
        self.mapping, self.dtype, self.handles = mapping, dtype, {}

    def get(self, name: str, shape: tuple[int, ...]) -> torch.Tensor:
        path = self.mapping.get(name)
        if path is None:
            raise ModelFilesError(f"checkpoint lacks the tensor {name!r}")
        if path not in self.handles:
            self.handles[path] = _open(path)
        tensor = self.handles[path].get_tensor(name)
        if tuple(tensor.shape) != shape:
            raise ModelFilesError(
                f"{path.name}: tensor {name!r} has shape {tuple(tensor.shape)}, config.json implies {shape}"
            )
        return tensor.to(self.dtype).contiguous()

    def has(self, name: str) -> bool:
        return name in self.mapping


def load_model(folder: str | Path, dtype: str | None = "auto", max_context: int | None = None) -> Model:
    folder = Path(folder).expanduser()
    if not folder.is_dir():
        raise ModelFilesError(f"{folder}: no such model folder")
    config = ModelConfig.from_folder(folder)
    torch_dtype = resolve_dtype(dtype, config.torch_dtype)
    tensors = _Tensors(weight_files(folder), torch_dtype)
    c = config
    hidden, d, inter = c.hidden_size, c.head_dim, c.intermediate_size
    tied = c.tie_word_embeddings or not tensors.has("lm_head.weight")
    if tied and not c.tie_word_embeddings:
        raise ModelFilesError("checkpoint lacks the tensor 'lm_head.weight' and tie_word_embeddings is false")
    # Every matrix a decode step streams, in one huge-page arena (the LM head is the embedding when tied).
    per_layer = [
        ((c.num_heads + 2 * c.num_kv_heads) * d, hidden),
        (hidden, c.num_heads * d),
        (2 * inter, hidden),
    ]
    shapes = (per_layer + [(hidden, inter)]) * c.num_layers + [(c.vocab_size, hidden)]
    arena = Arena.for_shapes(shapes, torch_dtype)
    embed = tensors.get("model.embed_tokens.weight", (c.vocab_size, hidden))
    if tied:
        embed = arena.take(tuple(embed.shape), torch_dtype).copy_(embed)
    layers = []
    for i in range(c.num_layers):
        p = f"model.layers.{i}."
        q = tensors.get(p + "self_attn.q_proj.weight", (c.num_heads * d, hidden))
        k = tensors.get(p + "self_attn.k_proj.weight", (c.num_kv_heads * d, hidden))
        v = tensors.get(p + "self_attn.v_proj.weight", (c.num_kv_heads * d, hidden))
        bias = None
        if c.attention_bias:
            bias = torch.cat(
                [
                    tensors.get(p + "self_attn.q_proj.bias", (c.num_heads * d,)),
                    tensors.get(p + "self_attn.k_proj.bias", (c.num_kv_heads * d,)),
                    tensors.get(p + "self_attn.v_proj.bias", (c.num_kv_heads * d,)),
                ]
            )
        layers.append(
            DecoderLayer(
                index=i,
                input_norm=tensors.get(p + "input_layernorm.weight", (hidden,)),
                post_norm=tensors.get(p + "post_attention_layernorm.weight", (hidden,)),
                qkv=Projection(torch.cat([q, k, v]), bias, arena=arena),
                o_proj=Projection(
                    tensors.get(p + "self_attn.o_proj.weight", (hidden, c.num_heads * d)), arena=arena
                ),
                gate_up=Projection(
                    torch.cat(
                        [
                            tensors.get(p + "mlp.gate_proj.weight", (inter, hidden)),
                            tensors.get(p + "mlp.up_proj.weight", (inter, hidden)),
                        ]
                    ),
                    arena=arena,
                ),
                down=Projection(tensors.get(p + "mlp.down_proj.weight", (hidden, inter)), arena=arena),
                num_heads=c.num_heads,
                num_kv_heads=c.num_kv_heads,
                head_dim=d,
                window=c.layer_windows[i],
                eps=c.rms_norm_eps,
            )
        )
    if tied:
        head = Projection(embed, input_major=False)  # shares the embedding's memory: no transposed copy
    else:
        head = Projection(tensors.get("lm_head.weight", (c.vocab_size, hidden)), arena=arena)
    context = min(max_context or c.max_position_embeddings, c.max_position_embeddings)
    return Model(
        config=c,
        dtype=torch_dtype,
        embed=embed,
        layers=layers,
        final_norm=tensors.get("model.norm.weight", (hidden,)),
        head=head,
        rotary=RotaryTable(c.rope, d, context, torch_dtype),
    )
