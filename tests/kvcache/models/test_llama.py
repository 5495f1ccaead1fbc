"""Our model against transformers on tiny random checkpoints: logits (prefill and every decode step) and
greedy tokens with cache, without cache, and from transformers' generate()."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from kvcache.caches import ContiguousCache, SlidingWindowCache  # noqa: E402
from kvcache.generate import Generation  # noqa: E402
from kvcache.params import GenerationParams  # noqa: E402
from kvcache.utils.loader import load_model  # noqa: E402
from tests.support.kvcache_checkpoints import (  # noqa: E402, F401 (one_torch_thread: an autouse fixture)
    SLIDING_WINDOW,
    checkpoint,
    hf_model,
    one_torch_thread,
    prompt_ids,
)

pytestmark = pytest.mark.local
ARCHS = ["llama3", "mistral", "qwen2", "llama_v4_layout"]
TOL = 1e-4


def hf_logits(name: str, ids: list[int]) -> torch.Tensor:
    with torch.no_grad():
        return hf_model(name)(torch.tensor([ids])).logits[0].float()


@pytest.mark.parametrize("name", ARCHS)
def test_logits_match_transformers_for_prefill_and_every_decode_step(name):
    model = load_model(checkpoint(name), "fp32")
    ids = prompt_ids(24, seed=3)
    reference = hf_logits(name, ids)
    assert (model.forward(ids, all_logits=True) - reference).abs().max() <= TOL  # no cache, every position
    cache = ContiguousCache(model.config, 64)
    split = 10
    prefill = model.forward(ids[:split], cache, all_logits=True)
    assert (prefill - reference[:split]).abs().max() <= TOL
    for step, token in enumerate(ids[split:], start=split):
        assert (model.forward([token], cache)[0] - reference[step]).abs().max() <= TOL, f"decode step {step}"


@pytest.mark.parametrize("name", ARCHS)
def test_greedy_tokens_identical_with_cache_without_cache_and_transformers(name):
    model = load_model(checkpoint(name), "fp32")
    prompt, new = prompt_ids(12, seed=5), 20
    params = GenerationParams(max_new_tokens=new)
    with_cache = Generation(model, prompt, params, ContiguousCache(model.config, 64)).run()
    without_cache = Generation(model, prompt, params, None).run()
    with torch.no_grad():
        hf = (
            hf_model(name)
            .generate(
                torch.tensor([prompt]),
                max_new_tokens=new,
                min_new_tokens=new,
                do_sample=False,
                pad_token_id=0,
            )[0, len(prompt) :]
            .tolist()
        )
    assert with_cache == without_cache == hf
    # Near ties would make token equality luck: the logits along the whole sequence agree too.
    full = prompt + with_cache
    ours = model.forward(full, all_logits=True)
    assert (ours - hf_logits(name, full)).abs().max() <= TOL


def test_sliding_window_matches_transformers_mistral_beyond_the_window():
    model = load_model(checkpoint("mistral"), "fp32")
    assert model.config.sliding_window == SLIDING_WINDOW
    ids = prompt_ids(4 * SLIDING_WINDOW, seed=7)  # prompt much longer than the window
    reference = hf_logits("mistral", ids)
    cache = SlidingWindowCache(model.config, 64, torch.float32)
    prefill_len = 3 * SLIDING_WINDOW
    prefill = model.forward(ids[:prefill_len], cache, all_logits=True)
    assert (prefill - reference[:prefill_len]).abs().max() <= TOL
    for step, token in enumerate(ids[prefill_len:], start=prefill_len):
        assert (model.forward([token], cache)[0] - reference[step]).abs().max() <= TOL
    assert cache.k.shape[2] == SLIDING_WINDOW  # only the window is kept
    # The window matters: the same weights without it give different logits past the window.
    for layer in model.layers:
        layer.window = None
    assert (model.forward(ids, all_logits=True)[-1] - reference[-1]).abs().max() > 1e-3


@pytest.mark.parametrize("prefill", [SLIDING_WINDOW - 1, SLIDING_WINDOW, SLIDING_WINDOW + 1])
def test_sliding_window_rolls_over_exactly_at_w_and_w_plus_one(prefill):
    model = load_model(checkpoint("mistral"), "fp32")
    ids = prompt_ids(prefill + 3, seed=13)
    reference = hf_logits("mistral", ids)
    cache = SlidingWindowCache(model.config, 64, torch.float32)
    assert (model.forward(ids[:prefill], cache)[0] - reference[prefill - 1]).abs().max() <= TOL
    for step, token in enumerate(ids[prefill:], start=prefill):  # decode steps at and across the window
        assert (model.forward([token], cache)[0] - reference[step]).abs().max() <= TOL, f"step {step}"
    assert sorted(cache.slot_positions.tolist()) == list(range(len(ids) - SLIDING_WINDOW, len(ids)))


def test_sliding_window_generation_equals_full_cache_generation():
    model = load_model(checkpoint("mistral"), "fp32")
    prompt = prompt_ids(3 * SLIDING_WINDOW, seed=9)
    params = GenerationParams(max_new_tokens=2 * SLIDING_WINDOW)
    sliding = Generation(model, prompt, params, SlidingWindowCache(model.config, 128)).run()
    full = Generation(model, prompt, params, ContiguousCache(model.config, 128)).run()
    assert sliding == full


@pytest.mark.parametrize("dtype", ["bf16", "fp16"])
def test_half_precision_runs_and_stays_close_to_fp32(dtype):
    fp32 = load_model(checkpoint("llama3"), "fp32")
    half = load_model(checkpoint("llama3"), dtype)
    ids = prompt_ids(16, seed=11)
    cache = ContiguousCache(half.config, 32, half.dtype)
    assert cache.k.dtype == half.dtype
    diff = (half.forward(ids, cache) - fp32.forward(ids)).abs().max()
    assert diff < 0.1, f"{dtype} logits differ from fp32 by {diff}"
