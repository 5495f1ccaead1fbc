"""Continuous batching over the paged pool, against each sequence run alone: greedy tokens identical in a
batch of 8, under chunked prefill and after preemption; a batched row's logits within 1e-4 of the same
sequence alone (fp32), whatever the other rows' lengths; two prompts with one prefix in one step; int8."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from kvcache.caches import ContiguousCache  # noqa: E402
from kvcache.engine.engine import Engine, EngineConfig  # noqa: E402
from kvcache.engine.scheduler import Chunk  # noqa: E402
from kvcache.engine.sequence import Sequence  # noqa: E402
from kvcache.engine.step_batch import StepBatch  # noqa: E402
from kvcache.generate import Generation  # noqa: E402
from kvcache.params import GenerationParams  # noqa: E402
from tests.support.kvcache_checkpoints import checkpoint, one_torch_thread, prompt_ids  # noqa: E402, F401 (autouse fixture)

pytestmark = pytest.mark.local
ARCHS = ["llama3", "mistral", "qwen2"]  # mistral: sliding window 8, shorter than these sequences
TOL = 1e-4
NEW = 16


def engine(name: str, **config) -> Engine:
    return Engine(
        EngineConfig(model_path=str(checkpoint(name)), threads=1, max_context=256, block_size=4, **config)
    )


def prompts(count: int = 8) -> list[list[int]]:
    return [prompt_ids(3 + 9 * i, seed=100 + i) for i in range(count)]  # 3 … 66 tokens


def alone(model, prompt: list[int], new: int = NEW) -> list[int]:
    return Generation(
        model, prompt, GenerationParams(max_new_tokens=new), ContiguousCache(model.config, 256)
    ).run()


def drive(eng: Engine, seqs: list[Sequence]) -> list[int]:
    """The engine loop without its thread (deterministic): returns how many sequences each step ran."""
    for seq in seqs:
        eng.scheduler.add(seq)
    widths = []
    while eng.scheduler.has_work():
        chunks = eng.scheduler.schedule()
        widths.append(len(chunks))
        for seq, token in eng.runner.step(chunks):
            seq.token_ids.append(token)
            if seq.num_new_tokens >= seq.max_new_tokens:
                eng.scheduler.finish(seq, "length")
    return widths


def sequences(batch: list[list[int]], new: int = NEW) -> list[Sequence]:
    return [Sequence(p, GenerationParams(max_new_tokens=new), new) for p in batch]


@pytest.mark.parametrize("name", ARCHS)
def test_greedy_tokens_are_identical_alone_in_a_batch_of_8_chunked_and_after_preemption(name):
    reference = engine(name)
    expected = [alone(reference.model, p) for p in prompts()]
    cases = {
        "batch of 8": {},
        "chunked prefill": {"max_seqs": 8, "max_batched_tokens": 12},
        "preemption": {"kv_blocks": 64, "max_seqs": 8},  # 64 blocks of 4: one context, far less than 8 need
    }
    for case, config in cases.items():
        eng = engine(name, **config)
        seqs = sequences(prompts())
        widths = drive(eng, seqs)
        assert [s.tokens for s in seqs] == expected, case
        assert eng.pool.manager.num_free == len(eng.pool.manager.blocks), case  # every block back
        assert all(block.ref_count == 0 for block in eng.pool.manager.blocks), case
        if case == "batch of 8":
            assert max(widths) == 8
        if case == "chunked prefill":
            assert len(widths) > NEW + 5  # the prompts took several steps each
        if case == "preemption" and eng.allocator.window is None:  # mistral frees blocks behind its window
            assert eng.scheduler.preemptions > 0 and any(s.preemptions for s in seqs)


def test_a_sliding_window_model_holds_only_the_window_in_the_pool():
    eng = engine("mistral", kv_blocks=64)  # window 8, blocks of 4
    assert eng.allocator.window == 8
    seqs = sequences(prompts(4), new=60)
    held = []
    for seq in seqs:
        eng.scheduler.add(seq)
    while eng.scheduler.has_work():
        for seq, token in eng.runner.step(eng.scheduler.schedule()):
            seq.token_ids.append(token)
            if seq.num_new_tokens > 2:  # a prompt's prefill holds all its blocks; its decodes only the window
                held.append(sum(b >= 0 for b in seq.block_table))
            if seq.num_new_tokens >= 60:
                eng.scheduler.finish(seq, "length")
    assert max(held) <= 8 // 4 + 2  # the window's blocks, the one being filled, and one more at a boundary
    assert [s.tokens for s in seqs] == [alone(eng.model, p, 60) for p in prompts(4)]
    assert eng.pool.manager.num_free == 64


def reference_logits(model, ids: list[int]) -> torch.Tensor:
    return model.forward(ids, ContiguousCache(model.config, 256), all_logits=True)


@pytest.mark.parametrize("name", ARCHS)
def test_batched_rows_match_each_sequence_alone_within_1e_4(name):
    eng = engine(name)
    model, scheduler = eng.model, eng.scheduler
    seqs = sequences(prompts())
    for seq in seqs:
        scheduler.add(seq)
    for step in range(4):  # step 0: eight prompts of 3 … 66 tokens in one pass; then decodes of 8 lengths
        chunks = scheduler.schedule()
        assert len(chunks) == 8
        for i, m in enumerate(eng.pool.manager.blocks):  # whatever a row reads must not live in a free block
            if m.ref_count == 0:
                eng.pool.kv[:, :, i * 4 : (i + 1) * 4] = 1e3
        batch = StepBatch(chunks, eng.pool, window=eng.runner.window)
        logits = model.forward(batch.token_ids, batch.context)
        assert logits.shape == (8, model.config.vocab_size)
        for row, chunk in enumerate(batch.sampling):
            seq = chunk.seq
            expected = reference_logits(model, seq.token_ids)[-1]
            assert (logits[row] - expected).abs().max() <= TOL, f"step {step}, {len(seq)} tokens"
        for chunk in chunks:
            chunk.seq.num_computed += chunk.count
        for row, chunk in enumerate(batch.sampling):
            chunk.seq.token_ids.append(int(logits[row].argmax()))


@pytest.mark.parametrize("name", ["llama3", "mistral"])
def test_prompt_chunks_beside_decodes_match_the_whole_prompt_alone(name):
    eng = engine(name)
    model, allocator = eng.model, eng.allocator
    stream = Sequence(prompt_ids(9, seed=3), GenerationParams(), 8)
    long = Sequence(prompt_ids(40, seed=4), GenerationParams(), 8)
    allocator.allocate(stream, 9)
    first = model.forward(*_batch(eng, [Chunk(stream, 0, 9)]))
    stream.num_computed = 9
    stream.token_ids.append(int(first[0].argmax()))
    rows = []
    for start in range(0, 40, 7):  # the long prompt in chunks of 7, each step beside one decode
        count = min(7, 40 - start)
        allocator.allocate(stream, 1)
        allocator.allocate(long, count)
        batch = StepBatch(
            [Chunk(long, start, count), Chunk(stream, stream.num_computed, 1)],
            eng.pool,
            window=eng.runner.window,
        )
        logits = model.forward(batch.token_ids, batch.context, all_logits=True)
        rows.append(logits[1:])  # the one-token row comes first
        expected = reference_logits(model, stream.token_ids)[-1]
        assert (logits[0] - expected).abs().max() <= TOL
        stream.num_computed += 1
        stream.token_ids.append(int(logits[0].argmax()))
        long.num_computed += count
    assert (torch.cat(rows) - reference_logits(model, long.token_ids)).abs().max() <= TOL


def test_two_prompts_with_one_system_prompt_in_one_step_compute_it_once():
    eng = engine("llama3")
    system = prompt_ids(40, seed=7)
    a, b = sequences([system + prompt_ids(5, seed=8), system + prompt_ids(6, seed=9)])
    eng.scheduler.add(a)
    eng.scheduler.add(b)
    chunks = eng.scheduler.schedule()
    assert [(c.seq, c.start, c.count) for c in chunks] == [
        (a, 0, 45),
        (b, 40, 6),
    ]  # b computes its own tail only
    sampled = eng.runner.step(chunks)
    for seq, token in sampled:
        seq.token_ids.append(token)
    while eng.scheduler.has_work():
        for seq, token in eng.runner.step(eng.scheduler.schedule()):
            seq.token_ids.append(token)
            if seq.num_new_tokens >= NEW:
                eng.scheduler.finish(seq, "length")
    assert b.cached_tokens == 40 and b.timings.cached_tokens == 40
    assert [a.tokens, b.tokens] == [alone(eng.model, a.token_ids[:45]), alone(eng.model, b.token_ids[:46])]


def test_an_int8_pool_halves_kv_bytes_and_stays_close():
    fp, int8 = engine("llama3"), engine("llama3", kv_cache="int8", kv_blocks=128)
    per_token = fp.model.config.kv_bytes_per_token(1)  # 2·L·H_kv·d values
    assert int8.pool.nbytes == per_token * 128 * 4 and fp.pool.nbytes == 4 * per_token * fp.pool.num_slots
    seq = Sequence(prompt_ids(48, seed=21), GenerationParams(), 8)
    int8.allocator.allocate(seq, 20)
    rows = [int8.model.forward(*_batch(int8, [Chunk(seq, 0, 20)]), all_logits=True)]
    seq.num_computed = 20
    for position in range(20, 48):  # one-token steps read the dequantized pool
        int8.allocator.allocate(seq, 1)
        rows.append(int8.model.forward(*_batch(int8, [Chunk(seq, position, 1)]), all_logits=True))
        seq.num_computed += 1
    reference, approx = reference_logits(fp.model, seq.token_ids), torch.cat(rows)
    assert (reference[:20] - approx[:20]).abs().max() <= TOL  # a first prompt attends to its exact K/V
    relative = float((reference - approx).abs().max()) / float(reference.std())
    agreement = float((reference.argmax(-1) == approx.argmax(-1)).float().mean())
    assert 0 < relative < 0.15 and agreement >= 0.9
    again = Sequence(
        seq.token_ids, GenerationParams(), 8
    )  # the same prompt in chunks: the prefill copy's path
    int8.allocator.allocate(again, 20)
    chunked = [int8.model.forward(*_batch(int8, [Chunk(again, 0, 20)]), all_logits=True)]
    for start in range(20, 48, 7):  # later chunks read a contiguous copy of what the pool stores
        again.num_computed = start
        int8.allocator.allocate(again, 7)
        chunked.append(int8.model.forward(*_batch(int8, [Chunk(again, start, 7)]), all_logits=True))
    assert again.prefill_kv is not None and (torch.cat(chunked) - approx).abs().max() <= TOL


def _batch(eng: Engine, chunks: list[Chunk]):
    batch = StepBatch(chunks, eng.pool, window=eng.runner.window)
    return batch.token_ids, batch.context


def test_engine_config_checks_the_new_fields():
    for bad in (
        {"kv_cache": "fp8"},
        {"max_seqs": 0},
        {"max_seqs": 32, "max_batched_tokens": 16},
        {"decode_slowdown": 0.5},
    ):
        with pytest.raises(ValueError):
            EngineConfig(**bad)
