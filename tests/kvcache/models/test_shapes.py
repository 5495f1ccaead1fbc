"""Random-weight models of real shapes: the calculator's terms from ``analyzer.kv``, the rest matching the
models' configs; built offline from a seed, and agreeing with transformers on the same weights."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from analyzer import kv  # noqa: E402
from kvcache.errors import UnsupportedModelError  # noqa: E402
from kvcache.models.build import build_model  # noqa: E402
from kvcache.models.shapes import EXTRAS, random_weights, shape_config, shape_dict, shape_names  # noqa: E402
from tests.support.kvcache_checkpoints import one_torch_thread  # noqa: E402, F401 (autouse fixture)

pytestmark = pytest.mark.local


@pytest.mark.parametrize("name", sorted(EXTRAS))
def test_preset_shapes_take_the_calculators_terms(name):
    preset, config = kv.find_preset(name), shape_config(name)
    assert (config.num_layers, config.num_kv_heads, config.head_dim, config.num_heads) == (
        preset.layers,
        preset.kv_heads,
        preset.head_dim,
        preset.query_heads,
    )
    assert (
        config.kv_bytes_per_token(2)
        == kv.KVShape(preset.layers, preset.kv_heads, preset.head_dim).bytes_per_token
    )


def test_llama_3_8b_is_the_real_shape_with_about_8b_parameters():
    config = shape_config("llama-3-8b")
    assert (config.hidden_size, config.intermediate_size, config.vocab_size) == (4096, 14336, 128256)
    assert config.rope.rope_type == "llama3" and config.max_position_embeddings == 131072
    d = config.head_dim
    per_layer = config.hidden_size * (config.num_heads + 2 * config.num_kv_heads) * d
    per_layer += config.hidden_size * config.num_heads * d + 3 * config.hidden_size * config.intermediate_size
    params = config.num_layers * per_layer + 2 * config.vocab_size * config.hidden_size
    assert 7.9e9 < params < 8.1e9
    one_b = shape_config("llama-3.2-1b")
    assert one_b.tie_word_embeddings and one_b.head_dim == 64 and one_b.num_layers == 16
    assert shape_config("mistral-7b").sliding_window == 4096 and shape_config("qwen2.5-7b").attention_bias


def test_unknown_and_foreign_shapes_are_refused_by_name():
    with pytest.raises(UnsupportedModelError, match="unknown shape 'gpt-9'; known: .*llama-3-8b"):
        shape_config("gpt-9")
    with pytest.raises(UnsupportedModelError, match="'gemma-2-9b': its architecture is not Llama-family"):
        shape_config("gemma-2-9b")
    assert "llama-3.2-1b" in shape_names() and "tiny" in shape_names()
    assert shape_config("Llama3-8B") == shape_config("llama-3-8b")  # the calculator's aliases


def test_random_weights_are_a_function_of_the_seed():
    config = shape_config("tiny")
    a, b, c = (random_weights(config, "cpu", torch.float32, seed) for seed in (0, 0, 1))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert not torch.equal(a["model.layers.0.mlp.up_proj.weight"], c["model.layers.0.mlp.up_proj.weight"])
    assert a["model.layers.1.self_attn.q_proj.weight"].shape == (128, 128)


def test_a_random_shape_agrees_with_transformers_on_the_same_weights():
    transformers = pytest.importorskip("transformers")
    shape = shape_dict("tiny")  # llama3 RoPE scaling, GQA
    config = shape_config("tiny")
    weights = random_weights(config, "cpu", torch.float32, seed=3)
    model = build_model(
        config, lambda name, _: weights[name], weights.__contains__, torch.float32, "cpu", 2048
    )
    fields = {k: v for k, v in shape.items() if k not in ("architectures", "model_type", "prefixgate_shape")}
    hf = transformers.AutoModelForCausalLM.from_config(transformers.AutoConfig.for_model("llama", **fields))
    hf.load_state_dict(weights)
    prompt = torch.randint(2, config.vocab_size, (1, 1500), generator=torch.Generator().manual_seed(0))
    with torch.inference_mode():
        theirs = hf.eval()(prompt).logits[0]
    ours = model.forward(prompt[0].tolist(), None, all_logits=True)
    assert torch.allclose(ours, theirs, atol=1e-4, rtol=1e-4)  # past 1024 tokens: the llama3 scaling counts
