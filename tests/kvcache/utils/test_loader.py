"""Loading checkpoints: sharded safetensors, tied embeddings, and bad input → clear errors, no traceback."""

from __future__ import annotations

import json
import shutil

import pytest

torch = pytest.importorskip("torch")

from click.testing import CliRunner  # noqa: E402
from safetensors.torch import load_file, save_file  # noqa: E402

from kvcache.errors import ContextLengthError, DTypeError, ModelFilesError, UnsupportedModelError  # noqa: E402
from kvcache.generate import Generation  # noqa: E402
from kvcache.params import GenerationParams  # noqa: E402
from kvcache.server.cli import local_command  # noqa: E402
from kvcache.utils.loader import load_model  # noqa: E402
from tests.support.kvcache_checkpoints import checkpoint, one_torch_thread, prompt_ids  # noqa: E402, F401 (autouse fixture)

pytestmark = pytest.mark.local


@pytest.fixture
def llama_copy(tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(checkpoint("llama3"), folder)
    return folder


def test_sharded_checkpoint_with_index_loads_the_same_weights(llama_copy):
    tensors = load_file(str(llama_copy / "model.safetensors"))
    names = sorted(tensors)
    half = len(names) // 2
    shards = {
        "model-00001-of-00002.safetensors": names[:half],
        "model-00002-of-00002.safetensors": names[half:],
    }
    for shard, keys in shards.items():
        save_file({k: tensors[k] for k in keys}, str(llama_copy / shard))
    (llama_copy / "model.safetensors").unlink()
    weight_map = {k: shard for shard, keys in shards.items() for k in keys}
    (llama_copy / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    single, sharded = load_model(checkpoint("llama3"), "fp32"), load_model(llama_copy, "fp32")
    for a, b in zip(single.layers, sharded.layers, strict=True):
        assert torch.equal(a.qkv.weight, b.qkv.weight) and torch.equal(a.down.weight, b.down.weight)
    assert torch.equal(single.lm_head, sharded.lm_head) and torch.equal(single.embed, sharded.embed)
    (llama_copy / "model-00002-of-00002.safetensors").unlink()
    with pytest.raises(ModelFilesError, match="model-00002-of-00002.safetensors: missing weight shard"):
        load_model(llama_copy)


def test_tied_embeddings_need_no_lm_head():
    model = load_model(checkpoint("qwen2"), "fp32")
    assert model.config.tie_word_embeddings and model.lm_head is model.embed


def test_missing_files_and_tensors_are_named(tmp_path, llama_copy):
    with pytest.raises(ModelFilesError, match="no such model folder"):
        load_model(tmp_path / "nowhere")
    with pytest.raises(ModelFilesError, match="missing config.json"):
        load_model(tmp_path)
    tensors = load_file(str(llama_copy / "model.safetensors"))
    del tensors["model.layers.1.mlp.down_proj.weight"]
    save_file(tensors, str(llama_copy / "model.safetensors"))
    with pytest.raises(ModelFilesError, match="'model.layers.1.mlp.down_proj.weight'"):
        load_model(llama_copy)
    (llama_copy / "model.safetensors").unlink()
    with pytest.raises(ModelFilesError, match="missing model.safetensors"):
        load_model(llama_copy)


def test_unsupported_architecture_and_unrunnable_dtype(llama_copy):
    with pytest.raises(DTypeError, match="cannot compute in float8_e4m3fn"):
        load_model(llama_copy, "float8_e4m3fn")
    with pytest.raises(DTypeError, match="unknown dtype 'fp7'"):
        load_model(llama_copy, "fp7")
    raw = json.loads((llama_copy / "config.json").read_text())
    raw["model_type"] = "gpt_neox"
    (llama_copy / "config.json").write_text(json.dumps(raw))
    with pytest.raises(UnsupportedModelError, match="unsupported architecture 'gpt_neox'"):
        load_model(llama_copy)


def test_prompt_longer_than_the_context_is_refused():
    model = load_model(checkpoint("llama3"), "fp32", max_context=32)
    with pytest.raises(ContextLengthError, match="the prompt has 40 tokens; this model's context is 32"):
        Generation(model, prompt_ids(40), GenerationParams(), None)
    # Generation stops at the context instead of running past it.
    generation = Generation(model, prompt_ids(30), GenerationParams(max_new_tokens=10), None)
    assert len(generation.run()) == 2 and generation.finish_reason == "length"


@pytest.mark.parametrize(
    "problem, message",
    [
        ("no folder", "no such model folder"),
        ("no tokenizer", "missing tokenizer.json"),
        ("gpt2", "unsupported architecture 'gpt2'"),
        ("float8", "cannot compute in float8_e4m3fn"),
        ("few blocks", "--kv-blocks 2 × --block-size 16 = 32 tokens is less than one context (64 tokens)"),
        ("bad template", "the chat template does not compile"),
    ],
)
def test_cli_reports_bad_input_in_one_line_without_traceback(problem, message, llama_copy, monkeypatch):
    import uvicorn

    def serve(*args, **kwargs):  # bad input must stop the command before it serves (and would block here)
        raise AssertionError("prefixgate local started serving despite bad input")

    monkeypatch.setattr(uvicorn, "run", serve)
    args = ["--model", str(llama_copy), "--threads", "1"]
    if problem == "no folder":
        args[1] = "/definitely/not/here"
    elif problem == "no tokenizer":
        (llama_copy / "tokenizer.json").unlink()
    elif problem == "gpt2":
        raw = json.loads((llama_copy / "config.json").read_text())
        (llama_copy / "config.json").write_text(json.dumps({**raw, "model_type": "gpt2"}))
    elif problem == "few blocks":
        args += ["--kv-blocks", "2", "--max-context", "64"]
    elif problem == "bad template":
        (llama_copy / "chat_template.jinja").write_text("{% if %}")
    else:
        args += ["--dtype", "float8_e4m3fn"]
    result = CliRunner().invoke(local_command, args)
    assert result.exit_code == 1
    assert message in result.output
    assert "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit)  # a clean exit, not an escaped exception
