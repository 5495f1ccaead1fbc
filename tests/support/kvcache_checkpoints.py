"""Tiny random Hugging Face checkpoints for the kvcache tests, built offline with transformers.

Each is built once per test session (cached by name) into a temporary folder: config.json, safetensors
weights, and a byte-level BPE tokenizer trained on local text. ``hf_model(name)`` returns the matching
transformers model (fp32, eval) for logit comparisons. ``one_torch_thread`` is an autouse fixture for the
test modules that import it: every kvcache test computes on one torch thread (the machine is shared).
``needs_cuda`` marks a GPU test: it runs where CUDA is present and is skipped elsewhere. Nothing downloads.
"""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import tempfile
from pathlib import Path

import pytest
import torch

ROOT = Path(tempfile.mkdtemp(prefix="pg-kvcache-models-"))
atexit.register(shutil.rmtree, ROOT, True)

COMMON = dict(
    hidden_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    intermediate_size=128,
    vocab_size=320,
    max_position_embeddings=256,
    initializer_range=0.15,
    bos_token_id=0,
    eos_token_id=1,
)
SLIDING_WINDOW = 8


needs_cuda = [
    pytest.mark.cuda,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (the one allowed skip)"),
]


@pytest.fixture(autouse=True)
def one_torch_thread():
    torch.set_num_threads(1)


def _configs() -> dict:
    from transformers import LlamaConfig, MistralConfig, Qwen2Config

    return {
        "llama3": LlamaConfig(
            **COMMON,
            rope_scaling={
                "rope_type": "llama3",
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 32,
            },
        ),
        "mistral": MistralConfig(**COMMON, sliding_window=SLIDING_WINDOW),
        "qwen2": Qwen2Config(**{**COMMON, "num_key_value_heads": 1}, tie_word_embeddings=True),
        "llama_v4_layout": LlamaConfig(**COMMON),
    }


@functools.cache
def tokenizer_files() -> Path:
    from kvcache.demo import local_corpus, train_tokenizer, write_tokenizer

    folder = ROOT / "tokenizer"
    folder.mkdir()
    write_tokenizer(folder, train_tokenizer(300, local_corpus(limit_chars=40_000)))
    return folder


@functools.cache
def checkpoint(name: str) -> Path:
    """Folder of the tiny checkpoint ``name`` (llama3, mistral, qwen2, llama_v4_layout)."""
    from transformers import AutoModelForCausalLM

    torch.manual_seed(1234)
    config = _configs()[name]
    model = AutoModelForCausalLM.from_config(config).eval()
    folder = ROOT / name
    model.save_pretrained(folder)
    for file in tokenizer_files().iterdir():
        shutil.copy(file, folder / file.name)
    if (
        name == "llama_v4_layout"
    ):  # rewrite to the transformers 4.x layout: top-level rope_theta, no rope_parameters
        raw = json.loads((folder / "config.json").read_text())
        raw["rope_theta"] = raw.pop("rope_parameters")["rope_theta"]
        raw["rope_scaling"] = {"type": "linear", "factor": 2.0}
        raw["torch_dtype"] = raw.pop("dtype", "float32")
        (folder / "config.json").write_text(json.dumps(raw))
    return folder


@functools.cache
def hf_model(name: str):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(str(checkpoint(name)), dtype=torch.float32).eval()


def prompt_ids(length: int, seed: int = 0, vocab: int = 300) -> list[int]:
    return torch.randint(4, vocab, (length,), generator=torch.Generator().manual_seed(seed)).tolist()
