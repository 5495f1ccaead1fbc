"""The demo checkpoint used when ``prefixgate local`` gets no ``--model``: random weights, built offline.

A Llama-shaped model (GQA, SwiGLU, RMSNorm, RoPE) whose weights come from a fixed seed,
and a byte-level BPE tokenizer trained with ``tokenizers`` on Python's own standard-library docstrings,
written as a normal Hugging Face folder (config.json, model.safetensors, tokenizer.json,
tokenizer_config.json with a chat template) into ``$XDG_CACHE_HOME/prefixgate`` (or ``~/.cache/prefixgate``).
Built once, atomically, then reused. The model is RANDOM: its text is gibberish; it exists to exercise the
engine and measure speed. This module does not download anything and does not need transformers.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import shutil
import tempfile
import warnings
from pathlib import Path

import torch
from safetensors.torch import save_file
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

DEMO_NAME = "prefixgate-demo-random-v2"
DEMO_NOTICE = "demo model with RANDOM weights (built offline from a fixed seed): it produces gibberish"
SPECIAL_TOKENS = ["<s>", "</s>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
DEMO_SHAPE = {
    "hidden_size": 384,
    "num_hidden_layers": 6,
    "num_attention_heads": 6,
    "num_key_value_heads": 2,
    "intermediate_size": 1024,
    "vocab_size": 4096,
    "max_position_embeddings": 8192,
}
CORPUS_MODULES = (
    "json",
    "os",
    "re",
    "pathlib",
    "collections",
    "functools",
    "itertools",
    "typing",
    "argparse",
    "subprocess",
    "datetime",
    "logging",
    "asyncio",
    "dataclasses",
    "inspect",
    "string",
    "textwrap",
    "unittest",
    "socket",
    "http.client",
    "email.message",
    "csv",
    "sqlite3",
    "decimal",
    "random",
)


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "prefixgate"


def local_corpus(limit_chars: int = 400_000) -> list[str]:
    """Docstrings of standard-library modules and their members, in a fixed order."""
    texts: list[str] = []
    with warnings.catch_warnings():  # some attributes (typing.io, ...) warn when touched
        warnings.simplefilter("ignore")
        for name in CORPUS_MODULES:
            texts.extend(_docstrings(name))
    corpus, size = [], 0
    for text in texts:
        if size >= limit_chars:
            break
        corpus.append(text)
        size += len(text)
    return corpus


def _docstrings(module_name: str) -> list[str]:
    module = importlib.import_module(module_name)
    texts = [inspect.getdoc(module) or ""]
    for attr in sorted(dir(module)):
        doc = inspect.getdoc(getattr(module, attr, None)) if not attr.startswith("_") else None
        if doc:
            texts.append(doc)
    return texts


def train_tokenizer(vocab_size: int, corpus: list[str] | None = None) -> Tokenizer:
    """A byte-level BPE (any text encodes) with SPECIAL_TOKENS as ids 0..3."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(corpus if corpus is not None else local_corpus(), trainer=trainer)
    return tokenizer


def write_tokenizer(folder: Path, tokenizer: Tokenizer) -> None:
    tokenizer.save(str(folder / "tokenizer.json"))
    settings = {
        "bos_token": "<s>",
        "eos_token": "<|im_end|>",
        "chat_template": CHAT_TEMPLATE,
        "tokenizer_class": "PreTrainedTokenizerFast",
        "model_max_length": DEMO_SHAPE["max_position_embeddings"],
    }
    (folder / "tokenizer_config.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")


def random_llama_weights(shape: dict[str, int], seed: int = 0) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    hidden, inter = shape["hidden_size"], shape["intermediate_size"]
    head_dim = hidden // shape["num_attention_heads"]
    kv = shape["num_key_value_heads"] * head_dim

    def matrix(rows: int, cols: int) -> torch.Tensor:
        return torch.randn(rows, cols, generator=gen) / cols**0.5

    # Residual branches are scaled down so each position's own token still shows through; the untied LM
    # head then maps it to a pseudo-random next token: varied gibberish rather than one repeated token.
    branch = 0.3
    weights = {
        "model.embed_tokens.weight": torch.randn(shape["vocab_size"], hidden, generator=gen),
        "lm_head.weight": matrix(shape["vocab_size"], hidden) * 4.0,
        "model.norm.weight": torch.ones(hidden),
    }
    for i in range(shape["num_hidden_layers"]):
        p = f"model.layers.{i}."
        weights |= {
            p + "self_attn.q_proj.weight": matrix(hidden, hidden),
            p + "self_attn.k_proj.weight": matrix(kv, hidden),
            p + "self_attn.v_proj.weight": matrix(kv, hidden),
            p + "self_attn.o_proj.weight": matrix(hidden, hidden) * branch,
            p + "mlp.gate_proj.weight": matrix(inter, hidden),
            p + "mlp.up_proj.weight": matrix(inter, hidden),
            p + "mlp.down_proj.weight": matrix(hidden, inter) * branch,
            p + "input_layernorm.weight": torch.ones(hidden),
            p + "post_attention_layernorm.weight": torch.ones(hidden),
        }
    return weights


def llama_config(shape: dict[str, int], eos_ids: list[int]) -> dict:
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        **shape,
        "head_dim": shape["hidden_size"] // shape["num_attention_heads"],
        "hidden_act": "silu",
        "rms_norm_eps": 1e-5,
        "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0},
        "tie_word_embeddings": False,
        "attention_bias": False,
        "mlp_bias": False,
        "bos_token_id": 0,
        "eos_token_id": eos_ids,
        "dtype": "float32",
        "prefixgate_note": DEMO_NOTICE,
    }


def ensure_demo_model(root: Path | None = None) -> Path:
    """The demo checkpoint folder, building it first if absent (a few seconds; deterministic)."""
    target = (root or cache_root()) / DEMO_NAME
    if (target / "model.safetensors").is_file() and (target / "tokenizer.json").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".building-", dir=target.parent))
    try:
        tokenizer = train_tokenizer(DEMO_SHAPE["vocab_size"])
        write_tokenizer(work, tokenizer)
        eos = [tokenizer.token_to_id("<|im_end|>"), tokenizer.token_to_id("</s>")]
        save_file(
            random_llama_weights(DEMO_SHAPE), str(work / "model.safetensors"), metadata={"format": "pt"}
        )
        (work / "config.json").write_text(
            json.dumps(llama_config(DEMO_SHAPE, eos), indent=2), encoding="utf-8"
        )
        (work / "README.txt").write_text(DEMO_NOTICE + "\n", encoding="utf-8")
        try:
            work.chmod(0o755)
            work.rename(target)
        except OSError:  # another process finished first
            shutil.rmtree(work, ignore_errors=True)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return target
