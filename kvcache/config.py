"""A Hugging Face ``config.json`` turned into one validated ``ModelConfig``.

Reads both layouts: transformers 4.x (top-level ``rope_theta`` / ``rope_scaling``) and 5.x
(``rope_parameters``). Understands Llama (incl. ``llama3`` and ``linear`` RoPE scaling), Mistral
(``sliding_window``), Qwen2 (q/k/v bias, per-layer ``layer_types``) and tied embeddings.
It does not load weights or pick a dtype to compute in (see ``utils.loader`` and ``utils.dtypes``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kvcache.errors import ModelFilesError, UnsupportedModelError

SUPPORTED_MODEL_TYPES = ("llama", "mistral", "qwen2")
SUPPORTED_ROPE_TYPES = ("default", "linear", "llama3")
# ModelConfig field → the config.json key it comes from (error messages name the key the user can see)
JSON_KEYS = {
    "vocab_size": "vocab_size",
    "hidden_size": "hidden_size",
    "num_layers": "num_hidden_layers",
    "num_heads": "num_attention_heads",
    "num_kv_heads": "num_key_value_heads",
    "head_dim": "head_dim",
    "intermediate_size": "intermediate_size",
    "max_position_embeddings": "max_position_embeddings",
}


@dataclass(frozen=True)
class RopeConfig:
    theta: float = 10000.0
    rope_type: str = "default"
    factor: float = 1.0
    low_freq_factor: float = 1.0
    high_freq_factor: float = 4.0
    original_max_position_embeddings: int = 8192

    def __post_init__(self) -> None:
        if self.rope_type not in SUPPORTED_ROPE_TYPES:
            raise UnsupportedModelError(
                f"RoPE type {self.rope_type!r} is not supported (supported: {', '.join(SUPPORTED_ROPE_TYPES)})"
            )
        if self.theta <= 0 or self.factor <= 0:
            raise UnsupportedModelError(f"invalid RoPE parameters: theta={self.theta}, factor={self.factor}")
        if self.rope_type == "llama3" and not 0 < self.low_freq_factor < self.high_freq_factor:
            raise UnsupportedModelError("llama3 RoPE scaling needs 0 < low_freq_factor < high_freq_factor")
        if self.rope_type == "llama3" and self.original_max_position_embeddings <= 0:
            raise UnsupportedModelError(
                "llama3 RoPE scaling needs a positive original_max_position_embeddings"
            )


@dataclass(frozen=True)
class ModelConfig:
    model_type: str
    vocab_size: int
    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    max_position_embeddings: int
    rms_norm_eps: float = 1e-6
    rope: RopeConfig = field(default_factory=RopeConfig)
    attention_bias: bool = False
    tie_word_embeddings: bool = False
    layer_windows: tuple[int | None, ...] = ()
    eos_token_ids: tuple[int, ...] = ()
    bos_token_id: int | None = None
    torch_dtype: str | None = None

    def __post_init__(self) -> None:
        if self.model_type not in SUPPORTED_MODEL_TYPES:
            raise UnsupportedModelError(
                f"unsupported architecture {self.model_type!r} (supported: {', '.join(SUPPORTED_MODEL_TYPES)})"
            )
        for name, key in JSON_KEYS.items():
            if getattr(self, name) <= 0:
                raise UnsupportedModelError(f"config.json: {key} must be positive, got {getattr(self, name)}")
        if self.num_heads % self.num_kv_heads:
            raise UnsupportedModelError(
                f"num_attention_heads ({self.num_heads}) must be a multiple of "
                f"num_key_value_heads ({self.num_kv_heads})"
            )
        if self.head_dim % 2:
            raise UnsupportedModelError(f"head_dim must be even for RoPE, got {self.head_dim}")
        if not self.layer_windows:
            object.__setattr__(self, "layer_windows", (None,) * self.num_layers)
        if len(self.layer_windows) != self.num_layers:
            raise UnsupportedModelError("layer_types must name one attention type per layer")
        if any(w is not None and w <= 0 for w in self.layer_windows):
            raise UnsupportedModelError("sliding_window must be positive")

    @property
    def sliding_window(self) -> int | None:
        """The window when every layer uses the same one (Mistral), else None."""
        windows = set(self.layer_windows)
        return windows.pop() if len(windows) == 1 else None

    def kv_bytes_per_token(self, bytes_per_value: int) -> int:
        """The seeds' formula for one token: 2 · L · H_kv · d · bytes."""
        return 2 * self.num_layers * self.num_kv_heads * self.head_dim * bytes_per_value

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ModelConfig:
        model_type = raw.get("model_type") or ""
        archs = raw.get("architectures") or []
        if not model_type and archs:
            model_type = str(archs[0]).removesuffix("ForCausalLM").lower()
        if model_type not in SUPPORTED_MODEL_TYPES:
            named = model_type or (archs[0] if archs else "unknown")
            raise UnsupportedModelError(
                f"unsupported architecture {named!r} (supported: {', '.join(SUPPORTED_MODEL_TYPES)})"
            )
        act = raw.get("hidden_act", "silu")
        if act not in ("silu", "swish"):
            raise UnsupportedModelError(f"unsupported activation {act!r} (only SwiGLU with silu)")
        if raw.get("mlp_bias"):
            raise UnsupportedModelError("MLP biases (mlp_bias=true) are not supported")
        try:
            hidden, heads = int(raw["hidden_size"]), int(raw["num_attention_heads"])
            num_layers = int(raw["num_hidden_layers"])
            return cls(
                model_type=model_type,
                vocab_size=int(raw["vocab_size"]),
                hidden_size=hidden,
                num_layers=num_layers,
                num_heads=heads,
                num_kv_heads=int(raw.get("num_key_value_heads") or heads),
                head_dim=int(raw.get("head_dim") or (hidden // heads if heads > 0 else 0)),
                intermediate_size=int(raw["intermediate_size"]),
                max_position_embeddings=int(raw.get("max_position_embeddings", 2048)),
                rms_norm_eps=float(raw.get("rms_norm_eps", 1e-6)),
                rope=_rope_from(raw),
                attention_bias=bool(raw.get("attention_bias", model_type == "qwen2")),
                tie_word_embeddings=bool(raw.get("tie_word_embeddings", False)),
                layer_windows=_windows_from(raw, model_type, num_layers),
                eos_token_ids=_ids(raw.get("eos_token_id")),
                bos_token_id=raw.get("bos_token_id"),
                torch_dtype=raw.get("dtype") or raw.get("torch_dtype"),
            )
        except KeyError as exc:
            raise UnsupportedModelError(f"config.json lacks the required key {exc.args[0]!r}") from None
        except (TypeError, ValueError) as exc:
            raise UnsupportedModelError(f"config.json has an invalid value: {exc}") from None

    @classmethod
    def from_folder(cls, folder: str | Path) -> ModelConfig:
        path = Path(folder) / "config.json"
        if not path.is_file():
            raise ModelFilesError(
                f"{path}: missing config.json (is {folder} a Hugging Face checkpoint folder?)"
            )
        return cls.from_dict(read_json_object(path))


def read_json_object(path: Path) -> dict[str, Any]:
    """A checkpoint's JSON file (config.json, tokenizer_config.json) as a dict, or a ``ModelFilesError``."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelFilesError(f"{path}: cannot read {path.name}: {exc}") from None
    if not isinstance(raw, dict):
        raise ModelFilesError(f"{path}: {path.name} is not a JSON object")
    return raw


def _rope_from(raw: dict[str, Any]) -> RopeConfig:
    # 5.x: everything under rope_parameters; 4.x: rope_theta at top level + optional rope_scaling.
    params = dict(raw.get("rope_parameters") or {})
    scaling = raw.get("rope_scaling") or {}
    if not params:
        params = dict(scaling)
        params.setdefault("rope_theta", raw.get("rope_theta", 10000.0))
    rope_type = params.get("rope_type") or params.get("type") or "default"
    kwargs: dict[str, Any] = {
        "theta": float(params.get("rope_theta", raw.get("rope_theta", 10000.0))),
        "rope_type": rope_type,
    }
    for key in ("factor", "low_freq_factor", "high_freq_factor"):
        if key in params:
            kwargs[key] = float(params[key])
    if "original_max_position_embeddings" in params:
        kwargs["original_max_position_embeddings"] = int(params["original_max_position_embeddings"])
    return RopeConfig(**kwargs)


def _windows_from(raw: dict[str, Any], model_type: str, num_layers: int) -> tuple[int | None, ...]:
    window = raw.get("sliding_window")
    if model_type == "qwen2":
        if not raw.get("use_sliding_window") or not window:
            return (None,) * num_layers
        types = raw.get("layer_types")
        if not types:  # 4.x: layers from max_window_layers on use the window
            first = int(raw.get("max_window_layers", num_layers))
            types = ["full_attention" if i < first else "sliding_attention" for i in range(num_layers)]
        return tuple(int(window) if t == "sliding_attention" else None for t in types)
    types = raw.get("layer_types")
    if types:
        return tuple(int(window) if t == "sliding_attention" and window else None for t in types)
    return (int(window) if window else None,) * num_layers


def _ids(value: Any) -> tuple[int, ...]:
    if value is None:
        return ()
    if isinstance(value, (list, tuple)):
        return tuple(int(v) for v in value)
    return (int(value),)
