"""Hugging Face checkpoint folder → ``Model``: safetensors (single file or sharded with an index).

Reads ``config.json`` (via ``ModelConfig``), ``model.safetensors`` or ``model.safetensors.index.json`` and
its shards, and hands the tensors to ``models.build`` (cast to the requested dtype, fused, placed on the
device; tied checkpoints have no ``lm_head.weight``). Every missing file or tensor, or one whose shape
disagrees with config.json, is reported by name as a ``ModelFilesError``. It does not load tokenizers or
download anything.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from kvcache.config import ModelConfig
from kvcache.errors import ModelFilesError
from kvcache.models.build import build_model
from kvcache.models.llama import Model
from kvcache.utils.dtypes import resolve_dtype


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
    from safetensors import SafetensorError, safe_open  # here: importing the engine needs no safetensors

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


def load_model(
    folder: str | Path,
    dtype: str | None = "auto",
    max_context: int | None = None,
    device: torch.device | str = "cpu",
) -> Model:
    """The checkpoint in ``folder`` on ``device`` (its tensors read on the CPU, then moved one by one)."""
    folder = Path(folder).expanduser()
    if not folder.is_dir():
        raise ModelFilesError(f"{folder}: no such model folder")
    config = ModelConfig.from_folder(folder)
    device = torch.device(device)
    torch_dtype = resolve_dtype(dtype, device)
    tensors = _Tensors(weight_files(folder), torch_dtype)
    return build_model(config, tensors.get, tensors.has, torch_dtype, device, max_context)
