"""The server-side engine: pool sizing, config checks, and requests sharing prefix blocks in one pool."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from kvcache.engine.engine import Engine, EngineConfig, default_blocks  # noqa: E402
from kvcache.errors import ContextLengthError  # noqa: E402
from kvcache.params import GenerationParams  # noqa: E402
from tests.support.kvcache_checkpoints import checkpoint, prompt_ids  # noqa: E402

pytestmark = pytest.mark.local


def test_default_pool_is_four_contexts_capped_at_two_gib_but_never_under_one_context():
    assert default_blocks(bytes_per_token=6144, max_context=8192, block_size=16) == 4 * 512
    llama3_8b_bf16 = 2 * 32 * 8 * 128 * 2  # 128 KiB per token
    assert default_blocks(llama3_8b_bf16, 8192, 16) == 1024  # 2 GiB
    assert default_blocks(llama3_8b_bf16, 131072, 16) == 8192  # one full context, above the cap


@pytest.mark.parametrize("kwargs", [{"threads": 0}, {"max_context": 1}, {"block_size": 0}, {"kv_blocks": 0}])
def test_engine_config_is_validated(kwargs):
    with pytest.raises(ValueError):
        EngineConfig(**kwargs)


def test_requests_share_prefix_blocks_and_release_them():
    engine = Engine(
        EngineConfig(model_path=str(checkpoint("mistral")), threads=1, max_context=128, block_size=8)
    )
    shared = prompt_ids(40, seed=50)
    params = GenerationParams(max_new_tokens=4)
    free_before = engine.pool.manager.num_free
    cached = []
    for tail_seed in (51, 52, 53):
        run = engine.run(shared + prompt_ids(5, seed=tail_seed), params)
        assert len(list(run)) == 4
        cached.append(run.generation.timings.cached_tokens)
    assert cached == [0, 40, 40]
    assert engine.pool.manager.num_free == free_before  # every block is back in the pool (still hashed)
    assert engine.check(prompt_ids(100), None) == 28
    with pytest.raises(ContextLengthError, match="max_tokens asks for 29 more"):
        engine.check(prompt_ids(100), 29)
