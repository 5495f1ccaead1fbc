"""Each cache kind: measured bytes equal 2·L·H_kv·d·n·bytes; int8 error bounded and memory halved; the
paged cache shares prefix blocks across requests and gives the same logits as no sharing."""

from __future__ import annotations

import dataclasses

import pytest

torch = pytest.importorskip("torch")

from kvcache.caches import BlockPool, ContiguousCache, Int8Cache, SlidingWindowCache  # noqa: E402
from kvcache.caches.blocks import BlockManager, block_hash  # noqa: E402
from kvcache.caches.quantized import dequantize, quantize  # noqa: E402
from kvcache.config import ModelConfig  # noqa: E402
from kvcache.errors import EngineError  # noqa: E402
from kvcache.generate import Generation  # noqa: E402
from kvcache.params import GenerationParams  # noqa: E402
from kvcache.utils.loader import load_model  # noqa: E402
from tests.support.kvcache_checkpoints import checkpoint, one_torch_thread, prompt_ids  # noqa: E402, F401 (autouse fixture)

pytestmark = pytest.mark.local
# Llama 3 8B's shape, few layers: L=2, H_kv=8, d=128.
CONFIG = ModelConfig(
    model_type="llama",
    vocab_size=10,
    hidden_size=4096,
    num_layers=2,
    num_heads=32,
    num_kv_heads=8,
    head_dim=128,
    intermediate_size=16,
    max_position_embeddings=8192,
)

SMALL = dataclasses.replace(
    CONFIG, hidden_size=8, num_layers=1, num_heads=1, num_kv_heads=1, head_dim=8, layer_windows=()
)


def seeds_formula(layers: int, kv_heads: int, head_dim: int, tokens: int, bytes_per_value: int) -> int:
    return 2 * layers * kv_heads * head_dim * tokens * bytes_per_value


@pytest.mark.parametrize("dtype, size", [(torch.float32, 4), (torch.float16, 2), (torch.bfloat16, 2)])
def test_contiguous_cache_bytes_equal_the_formula(dtype, size):
    cache = ContiguousCache(CONFIG, 1000, dtype)
    assert cache.nbytes == seeds_formula(2, 8, 128, 1000, size) == cache.formula_bytes(1000)


def test_sliding_cache_bytes_are_the_formula_at_the_window_whatever_the_length():
    cache = SlidingWindowCache(CONFIG, capacity=8192, dtype=torch.float16, window=256)
    assert cache.nbytes == seeds_formula(2, 8, 128, 256, 2)


def test_int8_cache_bytes_are_the_formula_at_one_byte_and_half_of_fp16():
    int8, fp16 = Int8Cache(CONFIG, 1000, torch.float16), ContiguousCache(CONFIG, 1000, torch.float16)
    assert int8.nbytes == seeds_formula(2, 8, 128, 1000, 1) == fp16.nbytes // 2
    # The per-token, per-head fp16 scales are the only overhead: 2 bytes per 128 values.
    assert int8.extra_nbytes == 2 * 2 * 8 * 1000 * 2
    assert (int8.nbytes + int8.extra_nbytes) / fp16.nbytes < 0.52


def test_paged_pool_bytes_are_the_formula_for_its_blocks():
    pool = BlockPool(CONFIG, num_blocks=10, block_size=16, dtype=torch.float16)
    assert pool.nbytes == seeds_formula(2, 8, 128, 160, 2)
    seq = pool.sequence(160)
    seq.begin(list(range(20)))
    assert seq.nbytes == seeds_formula(2, 8, 128, 32, 2)  # two blocks held


@pytest.mark.parametrize("magnitude", [1e-7, 1.0, 1000.0])
def test_quantize_roundtrip_error_is_within_half_a_step_of_the_stored_scale(magnitude):
    x = torch.randn(4, 50, 64, generator=torch.Generator().manual_seed(0)) * magnitude
    q, scale = quantize(x)
    assert q.dtype == torch.int8 and scale.dtype == torch.float16 and scale.shape == (4, 50, 1)
    assert (scale > 0).all()  # a tiny vector's scale does not underflow fp16 to 0
    err = (dequantize(q, scale, torch.float32) - x).abs()
    # Quantized with the fp16 scale that is stored, not a finer fp32 one: no extra rounding on the way back.
    assert (err <= scale.float() * (0.5 + 1e-4)).all()


def test_int8_cache_logit_error_is_bounded_and_reported(record_property):
    model = load_model(checkpoint("llama3"), "fp32")
    ids = prompt_ids(40, seed=21)
    exact, quantized = ContiguousCache(model.config, 64), Int8Cache(model.config, 64)
    exact_rows = [model.forward(ids[:20], exact, all_logits=True)]
    int8_rows = [model.forward(ids[:20], quantized, all_logits=True)]
    for token in ids[20:]:  # decode steps read the dequantized cache
        exact_rows.append(model.forward([token], exact))
        int8_rows.append(model.forward([token], quantized))
    reference, approx = torch.cat(exact_rows), torch.cat(int8_rows)
    worst = float((reference - approx).abs().max())
    relative = worst / float(reference.std())
    agreement = float((reference.argmax(-1) == approx.argmax(-1)).float().mean())
    record_property("int8_max_logit_error", worst)
    print(
        f"int8 KV cache: max |logit error| {worst:.4f} ({relative:.1%} of the logits' std), "
        f"top-1 agreement {agreement:.0%} over 40 positions"
    )
    assert 0 < relative < 0.15
    assert agreement >= 0.9


def test_paged_prefix_sharing_reuses_blocks_and_matches_unshared_logits():
    model = load_model(checkpoint("qwen2"), "fp32")
    pool = BlockPool(model.config, num_blocks=32, block_size=4)
    system = prompt_ids(18, seed=31)
    first_prompt, second_prompt = system + prompt_ids(5, seed=32), system + prompt_ids(7, seed=33)
    params = GenerationParams(max_new_tokens=6)
    first = Generation(model, first_prompt, params, pool.sequence(64))
    first.run()
    first.cache.release()
    assert first.timings.cached_tokens == 0
    second_cache = pool.sequence(64)
    second = Generation(model, second_prompt, params, second_cache)
    tokens = second.run()
    assert second.timings.cached_tokens == 16  # four full blocks of the shared 18-token prefix
    assert pool.manager.hits == 4
    unshared = Generation(model, second_prompt, params, ContiguousCache(model.config, 64)).run()
    assert tokens == unshared
    # Logits too, not just tokens: the shared blocks hold exactly what a fresh prefill computes.
    shared_logits = model.forward([tokens[-1]], second_cache)
    fresh = ContiguousCache(model.config, 64)
    model.forward(second_prompt + tokens[:-1], fresh)
    assert (shared_logits - model.forward([tokens[-1]], fresh)).abs().max() <= 1e-5


def test_identical_prompt_still_computes_its_last_token():
    model = load_model(checkpoint("llama3"), "fp32")
    pool = BlockPool(model.config, num_blocks=16, block_size=4)
    prompt = prompt_ids(12, seed=41)  # exactly three blocks
    runs = []
    for _ in range(2):
        generation = Generation(model, prompt, GenerationParams(max_new_tokens=3), pool.sequence(64))
        runs.append((generation.run(), generation.timings.cached_tokens))
        generation.cache.release()
    assert runs[0][0] == runs[1][0]
    assert runs[1][1] == 8  # the last block is recomputed so the first new token has logits


def test_block_manager_recycles_least_recently_freed_and_forgets_its_hash():
    manager = BlockManager(num_blocks=2, block_size=2)
    a = manager.allocate()
    _, h = manager.lookup(b"", [1, 2])
    manager.register(a, h, [1, 2])
    manager.release(a)
    assert manager.lookup(b"", [1, 2])[0] == a  # freed but still cached
    b = manager.allocate()
    c = manager.allocate()  # recycles `a`: its hash is gone
    assert {b, c} == {0, 1}
    assert manager.lookup(b"", [1, 2])[0] is None
    with pytest.raises(EngineError, match="pool is full"):
        manager.allocate()


def test_blocks_are_not_shared_on_hash_match_with_different_tokens():
    manager = BlockManager(num_blocks=2, block_size=2)
    a = manager.allocate()
    _, h = manager.lookup(b"", [1, 2])
    manager.register(a, h, [9, 9])  # forged: same hash, other tokens
    assert manager.lookup(b"", [1, 2])[0] is None


def test_blocks_are_not_shared_on_hash_match_with_a_different_parent():
    manager = BlockManager(num_blocks=2, block_size=2)
    root = block_hash(b"", [1, 2])
    manager.register(manager.allocate(), root, [1, 2])
    child = manager.allocate()
    _, h = manager.lookup(root, [3, 4])
    manager.register(
        child, h, [3, 4], parent=block_hash(b"", [7, 7])
    )  # forged: same hash and tokens, other parent
    assert manager.lookup(root, [3, 4])[0] is None
    manager.register(child, h, [3, 4], parent=root)
    assert manager.lookup(root, [3, 4])[0] == child


def test_a_released_sequence_gives_up_its_tail_blocks_before_its_head():
    pool = BlockPool(SMALL, num_blocks=4, block_size=2)
    seq = pool.sequence(16)
    seq.begin([1, 2, 3, 4, 5, 6])  # three full blocks, published
    seq.advance()
    seq.release()
    pool.manager.allocate()  # the block never used
    pool.manager.allocate()  # a recycled one: the prefix's last block, so its first two still match
    assert pool.sequence(16).match_prefix([1, 2, 3, 4, 5, 6, 7]) == 4


def test_release_frees_blocks_and_working_copy_once_and_ends_the_sequence():
    pool = BlockPool(SMALL, num_blocks=4, block_size=2)
    seq = pool.sequence(16)
    seq.begin([1, 2, 3])
    seq.advance()
    assert pool.manager.num_free == 2 and seq.workspace_nbytes > 0
    seq.release()
    seq.release()  # idempotent: no block is handed back twice
    assert pool.manager.num_free == 4 and seq.workspace_nbytes == 0
    assert all(block.ref_count == 0 for block in pool.manager.blocks)
    with pytest.raises(ValueError, match="released"):
        seq.begin([4])
    with pytest.raises(ValueError, match="released more often"):
        pool.manager.release(0)


def test_two_running_sequences_share_a_prefix_and_one_leaving_early_does_not_disturb_the_other():
    model = load_model(checkpoint("llama3"), "fp32")
    pool = BlockPool(model.config, num_blocks=12, block_size=4)
    prompt = prompt_ids(18, seed=61)
    a, b = pool.sequence(64), pool.sequence(64)
    assert a.match_prefix(prompt) == 0
    token_a = int(model.forward(prompt, a)[-1].argmax())
    assert b.match_prefix(prompt) == 16  # A's four full blocks, while A is still running
    shared = b.block_table[:4]
    assert shared == a.block_table[:4] and all(pool.manager.blocks[i].ref_count == 2 for i in shared)
    logits_b = model.forward(prompt[16:], b)
    assert int(logits_b[-1].argmax()) == token_a
    for _ in range(2):  # interleaved decode steps: each writes only into blocks of its own
        token_a = int(model.forward([token_a], a)[-1].argmax())
    a.release()
    assert all(pool.manager.blocks[i].ref_count == 1 for i in shared)
    assert not set(b.block_table) & set(pool.manager.free)  # a shared block is never up for recycling
    size = pool.block_size
    for block in pool.manager.blocks:  # whatever B still reads must not live in a freed block
        if block.ref_count == 0:
            pool.k[:, block.block_id * size : (block.block_id + 1) * size] = 1e3
            pool.v[:, block.block_id * size : (block.block_id + 1) * size] = -1e3
    tokens, logits = [int(logits_b[-1].argmax())], [logits_b[-1]]
    for _ in range(6):
        logits.append(model.forward([tokens[-1]], b)[-1])
        tokens.append(int(logits[-1].argmax()))
    reference = ContiguousCache(model.config, 64)
    expected = [model.forward(prompt, reference)[-1]] + [
        model.forward([t], reference)[-1] for t in tokens[:-1]
    ]
    assert (torch.stack(logits) - torch.stack(expected)).abs().max() <= 1e-5
    later = pool.sequence(64)  # B's blocks (the shared prefix and its own full ones) still serve a new prompt
    assert later.match_prefix(prompt + tokens) == 24  # six full blocks: 18 prompt + 6 fed tokens


def test_paged_working_copy_holds_one_sequence_and_is_reported_apart_from_the_pool():
    pool = BlockPool(CONFIG, num_blocks=10, block_size=16, dtype=torch.float16)
    seq = pool.sequence(160)
    assert seq.workspace_nbytes == seeds_formula(2, 8, 128, 160, 2)
    assert pool.nbytes == seeds_formula(2, 8, 128, 160, 2)  # the pool's own size is unchanged


def test_contiguous_cache_hands_back_what_was_written_in_token_major_views():
    cache = ContiguousCache(CONFIG, 10)
    k, v = torch.randn(8, 3, 128), torch.randn(8, 3, 128)
    cache.begin([1, 2, 3])
    keys, values, positions = cache.update(0, k, v)
    cache.advance()
    assert keys.shape == (8, 3, 128) and torch.equal(keys, k) and torch.equal(values, v)
    assert positions.tolist() == [0, 1, 2]
    step_k, step_v = torch.randn(8, 1, 128), torch.randn(8, 1, 128)
    assert cache.begin([4]).tolist() == [3]
    keys, values, _ = cache.update(0, step_k, step_v)
    assert (
        torch.equal(keys[:, :3], k)
        and torch.equal(keys[:, 3:], step_k)
        and torch.equal(values[:, 3:], step_v)
    )


@pytest.mark.parametrize("kind", ["contiguous", "int8", "paged"])
def test_update_kv_stores_and_returns_the_same_as_update(kind):
    def make():
        if kind == "contiguous":
            return ContiguousCache(SMALL, 8)
        if kind == "int8":
            return Int8Cache(SMALL, 8)
        return BlockPool(SMALL, 4, 4).sequence(8)

    gen = torch.Generator().manual_seed(4)
    steps = [(torch.randn(1, 3, 8, generator=gen), torch.randn(1, 3, 8, generator=gen))]
    steps.append((torch.randn(1, 1, 8, generator=gen), torch.randn(1, 1, 8, generator=gen)))  # a decode step
    split, fused = make(), make()
    for k, v in steps:
        ids = list(range(k.shape[1]))
        split.begin(ids)
        fused.begin(ids)
        a = split.update(0, k, v)
        b = fused.update_kv(0, torch.cat((k, v)))
        for x, y in zip(a, b, strict=True):
            assert torch.equal(x, y)
        split.advance()
        fused.advance()
    assert fused.length == 4
