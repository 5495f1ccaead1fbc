"""The demo checkpoint: built offline, deterministic, says it is random, and serves through the engine."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

from kvcache import demo  # noqa: E402
from kvcache.engine.engine import Engine, EngineConfig  # noqa: E402
from kvcache.params import GenerationParams  # noqa: E402

pytestmark = pytest.mark.local


def test_weights_and_tokenizer_are_deterministic():
    shape = {
        **demo.DEMO_SHAPE,
        "hidden_size": 32,
        "num_attention_heads": 4,
        "num_hidden_layers": 1,
        "intermediate_size": 64,
        "vocab_size": 300,
    }
    a, b = demo.random_llama_weights(shape, seed=3), demo.random_llama_weights(shape, seed=3)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    corpus = demo.local_corpus(limit_chars=20_000)
    assert demo.train_tokenizer(280, corpus).to_str() == demo.train_tokenizer(280, corpus).to_str()


def test_demo_model_builds_into_the_user_cache_and_serves(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    torch.set_num_threads(1)
    engine = Engine(EngineConfig(threads=1, max_context=256))
    folder = tmp_path / "prefixgate" / demo.DEMO_NAME
    assert engine.is_demo and "RANDOM" in engine.notice
    assert json.loads((folder / "config.json").read_text())["prefixgate_note"] == demo.DEMO_NOTICE
    assert demo.ensure_demo_model() == folder  # reused, not rebuilt
    ids = engine.tokenizer.encode_chat([{"role": "user", "content": "Say hello."}])
    assert ids[0] == engine.tokenizer.token_id("<s>")
    run = engine.run(ids, GenerationParams(max_new_tokens=5, stop_token_ids=engine.stop_ids))
    tokens = list(run)
    assert 1 <= len(tokens) <= 5 and run.generation.timings.prompt_tokens == len(ids)
