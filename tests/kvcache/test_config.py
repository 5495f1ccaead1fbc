"""config.json → ModelConfig: both transformers layouts, RoPE types, windows, biases, and clear errors."""

from __future__ import annotations

import json

import pytest

from kvcache.config import ModelConfig
from kvcache.errors import ModelFilesError, UnsupportedModelError

BASE = {
    "model_type": "llama",
    "vocab_size": 100,
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 128,
    "max_position_embeddings": 512,
}


def test_transformers_5_layout_reads_rope_parameters():
    raw = {
        **BASE,
        "rope_parameters": {
            "rope_type": "llama3",
            "rope_theta": 500000.0,
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
        },
    }
    config = ModelConfig.from_dict(raw)
    assert config.rope.rope_type == "llama3" and config.rope.theta == 500000.0
    assert config.rope.original_max_position_embeddings == 8192
    assert config.head_dim == 16 and config.num_kv_heads == 2


def test_transformers_4_layout_reads_top_level_rope_theta_and_scaling():
    config = ModelConfig.from_dict(
        {**BASE, "rope_theta": 1e6, "rope_scaling": {"type": "linear", "factor": 4.0}}
    )
    assert (config.rope.theta, config.rope.rope_type, config.rope.factor) == (1e6, "linear", 4.0)
    plain = ModelConfig.from_dict({**BASE, "rope_theta": 1e6, "rope_scaling": None})
    assert (plain.rope.theta, plain.rope.rope_type) == (1e6, "default")


def test_mistral_window_applies_to_every_layer_and_kv_bytes_follow_the_formula():
    config = ModelConfig.from_dict({**BASE, "model_type": "mistral", "sliding_window": 4096})
    assert config.layer_windows == (4096, 4096) and config.sliding_window == 4096
    assert config.kv_bytes_per_token(2) == 2 * 2 * 2 * 16 * 2


def test_qwen2_has_qkv_bias_and_windows_only_when_enabled():
    qwen = {
        **BASE,
        "model_type": "qwen2",
        "sliding_window": 32,
        "use_sliding_window": False,
        "tie_word_embeddings": True,
    }
    config = ModelConfig.from_dict(qwen)
    assert config.attention_bias and config.tie_word_embeddings
    assert config.layer_windows == (None, None)
    windowed = ModelConfig.from_dict({**qwen, "use_sliding_window": True, "max_window_layers": 1})
    assert windowed.layer_windows == (None, 32) and windowed.sliding_window is None


def test_eos_list_and_explicit_head_dim():
    config = ModelConfig.from_dict({**BASE, "eos_token_id": [5, 7], "head_dim": 32})
    assert config.eos_token_ids == (5, 7) and config.head_dim == 32


@pytest.mark.parametrize(
    "change, message",
    [
        ({"model_type": "gpt2"}, "unsupported architecture 'gpt2'"),
        ({"model_type": "", "architectures": ["FalconForCausalLM"]}, "unsupported architecture"),
        ({"hidden_act": "gelu"}, "unsupported activation 'gelu'"),
        ({"num_key_value_heads": 3}, "multiple of num_key_value_heads"),
        ({"rope_parameters": {"rope_type": "yarn", "rope_theta": 1e4}}, "RoPE type 'yarn' is not supported"),
        ({"vocab_size": "many"}, "invalid value"),
        ({"num_attention_heads": 0}, "num_attention_heads must be positive, got 0"),
        ({"num_hidden_layers": 0}, "num_hidden_layers must be positive, got 0"),
        (
            {
                "rope_parameters": {
                    "rope_type": "llama3",
                    "rope_theta": 1e4,
                    "factor": 8,
                    "low_freq_factor": 0,
                }
            },
            "0 < low_freq_factor < high_freq_factor",
        ),
    ],
)
def test_unsupported_or_invalid_configs_name_the_problem(change, message):
    with pytest.raises(UnsupportedModelError, match=message):
        ModelConfig.from_dict({**BASE, **change})


def test_missing_required_key_is_named():
    raw = dict(BASE)
    del raw["intermediate_size"]
    with pytest.raises(UnsupportedModelError, match="'intermediate_size'"):
        ModelConfig.from_dict(raw)


def test_folder_without_config_or_with_bad_json(tmp_path):
    with pytest.raises(ModelFilesError, match="missing config.json"):
        ModelConfig.from_folder(tmp_path)
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(ModelFilesError, match="cannot read config.json"):
        ModelConfig.from_folder(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps(BASE))
    assert ModelConfig.from_folder(tmp_path).num_layers == 2
