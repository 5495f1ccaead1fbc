"""The generation loop: seeded sampling, stop tokens, max tokens, streaming, timings."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from kvcache.caches import ContiguousCache  # noqa: E402
from kvcache.generate import Generation  # noqa: E402
from kvcache.params import GenerationParams, SamplingParams  # noqa: E402
from kvcache.utils.loader import load_model  # noqa: E402
from tests.support.kvcache_checkpoints import checkpoint, prompt_ids  # noqa: E402

pytestmark = pytest.mark.local


@pytest.fixture(scope="module")
def model():
    torch.set_num_threads(1)
    return load_model(checkpoint("llama3"), "fp32")


def sample(model, params: GenerationParams, prompt=None):
    prompt = prompt or prompt_ids(10, seed=2)
    generation = Generation(model, prompt, params, ContiguousCache(model.config, 64))
    return generation.run(), generation


def test_seeded_sampling_is_reproducible_and_differs_from_greedy(model):
    hot = SamplingParams(temperature=1.5, seed=7)
    first, _ = sample(model, GenerationParams(max_new_tokens=16, sampling=hot))
    again, _ = sample(model, GenerationParams(max_new_tokens=16, sampling=hot))
    other, _ = sample(
        model, GenerationParams(max_new_tokens=16, sampling=SamplingParams(temperature=1.5, seed=8))
    )
    greedy, _ = sample(model, GenerationParams(max_new_tokens=16))
    assert first == again
    assert first != other and first != greedy


def test_stop_token_ends_generation_and_is_not_yielded(model):
    tokens, _ = sample(model, GenerationParams(max_new_tokens=12))
    stop = tokens[4]
    first_hit = tokens.index(stop)
    stopped, generation = sample(model, GenerationParams(max_new_tokens=12, stop_token_ids=frozenset({stop})))
    assert stopped == tokens[:first_hit] and generation.finish_reason == "stop"


def test_streaming_yields_token_by_token_with_timings(model):
    generation = Generation(
        model, prompt_ids(20, seed=4), GenerationParams(max_new_tokens=8), ContiguousCache(model.config, 64)
    )
    seen = []
    for token in generation:
        seen.append(token)
        assert generation.timings.new_tokens == len(seen)  # each token is handed out as soon as it exists
    t = generation.timings
    assert generation.finish_reason == "length" and len(seen) == 8
    assert t.prompt_tokens == 20 and t.decode_steps == 7
    assert t.ttft_s > 0 and t.prefill_tokens_per_s > 0 and t.decode_tokens_per_s > 0
