"""The scheduler on its own (no model): budgets, chunked prefill, pacing, preemption of the newest,
prefix sharing inside one step, and every block back in the pool whatever happens."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from kvcache.caches.blocks import BlockManager  # noqa: E402
from kvcache.engine.allocator import BlockAllocator  # noqa: E402
from kvcache.engine.pacing import Pacer  # noqa: E402
from kvcache.engine.scheduler import Scheduler, SchedulerConfig  # noqa: E402
from kvcache.engine.sequence import Sequence, Status  # noqa: E402
from kvcache.params import GenerationParams  # noqa: E402

pytestmark = pytest.mark.local
PARAMS = GenerationParams(max_new_tokens=100)


def make(blocks=64, block_size=4, sharing=True, **config) -> Scheduler:
    config.setdefault("decode_slowdown", 0)
    return Scheduler(SchedulerConfig(**config), BlockAllocator(BlockManager(blocks, block_size), sharing))


def seq(length: int, first: int = 1000) -> Sequence:
    return Sequence(list(range(first, first + length)), PARAMS, 100)


def run(scheduler: Scheduler, chunks, token: int = 7) -> None:
    """What the runner and loop do after a step: count the tokens computed, append a sampled token."""
    for chunk in chunks:
        chunk.seq.num_computed += chunk.count
        if chunk.samples:
            chunk.seq.token_ids.append(token)


def test_prompts_are_chunked_under_the_budget_and_decodes_go_first():
    scheduler = make(max_seqs=4, max_batched_tokens=16)
    a, b = seq(10), seq(30, first=2000)
    scheduler.add(a)
    scheduler.add(b)
    first = scheduler.schedule()
    assert [(c.seq, c.start, c.count) for c in first] == [(a, 0, 10), (b, 0, 6)]
    run(scheduler, first)
    second = scheduler.schedule()  # a decodes (1 token), b continues its prompt with the other 15
    assert [(c.seq, c.start, c.count, c.samples) for c in second] == [(a, 10, 1, True), (b, 6, 15, False)]
    run(scheduler, second)
    third = scheduler.schedule()
    assert [(c.seq, c.count, c.samples) for c in third] == [(a, 1, True), (b, 9, True)]


def test_max_seqs_and_the_waiting_queue_are_first_come_first_served():
    scheduler = make(max_seqs=2, max_batched_tokens=64)
    seqs = [seq(5, first=100 * i) for i in range(1, 4)]
    for s in seqs:
        scheduler.add(s)
    chunks = scheduler.schedule()
    assert [c.seq for c in chunks] == seqs[:2] and list(scheduler.waiting) == seqs[2:]
    assert seqs[0].status is Status.RUNNING and seqs[2].status is Status.WAITING


def test_without_chunking_a_prompt_step_and_a_decode_step_alternate_as_in_nano_vllm():
    scheduler = make(max_seqs=4, max_batched_tokens=8, chunked_prefill=False)
    a = seq(5)
    scheduler.add(a)
    run(scheduler, scheduler.schedule())
    long = seq(20, first=3000)  # over the budget: runs whole, in a step of its own
    scheduler.add(long)
    prefill = scheduler.schedule()
    assert [(c.seq, c.count) for c in prefill] == [(long, 20)]
    run(scheduler, prefill)
    assert [(c.seq, c.count) for c in scheduler.schedule()] == [(a, 1), (long, 1)]


def test_the_newest_running_sequence_is_preempted_and_recomputed_after_the_oldest_has_room():
    scheduler = make(blocks=6, block_size=4, max_seqs=4, max_batched_tokens=64)
    old, new = seq(8), seq(11, first=5000)  # 2 + 3 blocks of 6
    scheduler.add(old)
    scheduler.add(new)
    run(scheduler, scheduler.schedule())
    assert scheduler.allocator.num_free == 1
    for _ in range(4):  # old needs a third block after 4 more tokens, new its fourth
        run(scheduler, scheduler.schedule())
    assert scheduler.preemptions >= 1 and new.status is Status.WAITING and new.num_computed == 0
    assert new.token_ids[:11] == list(range(5000, 5011)) and len(new) > 11  # keeps what it generated
    assert scheduler.running == [old] and scheduler.waiting[0] is new
    scheduler.finish(old, "length")
    chunks = scheduler.schedule()  # re-admitted: all its tokens computed again (no blocks were cached twice)
    assert [(c.seq, c.start, c.count) for c in chunks] == [
        (new, new.num_computed, len(new) - new.num_computed)
    ]
    assert new.preemptions >= 1


def test_a_sequence_needing_a_block_preempts_itself_when_it_is_the_newest():
    scheduler = make(blocks=5, block_size=2, max_seqs=4, max_batched_tokens=64, sharing=False)
    a, b = seq(4), seq(3, first=50)
    scheduler.add(a)
    scheduler.add(b)
    run(scheduler, scheduler.schedule())  # a: 2 blocks, b: 2 blocks (one left for the decodes)
    run(scheduler, scheduler.schedule())  # a takes the last free block, b still fits in its own
    assert scheduler.allocator.num_free == 0
    chunks = scheduler.schedule()  # b needs a block and is the newest: it preempts itself
    assert [c.seq for c in chunks] == [a] and b.status is Status.WAITING and scheduler.waiting[0] is b
    assert scheduler.allocator.num_free == 2 and b.block_table == []


def test_two_requests_with_one_prefix_in_one_step_compute_it_once():
    scheduler = make(blocks=64, block_size=4, max_seqs=4, max_batched_tokens=64)
    system = list(range(500, 524))  # 6 full blocks
    a = Sequence(system + [1, 2, 3], PARAMS, 100)
    b = Sequence(system + [4, 5], PARAMS, 100)
    scheduler.add(a)
    scheduler.add(b)
    chunks = scheduler.schedule()
    assert [(c.seq, c.start, c.count) for c in chunks] == [(a, 0, 27), (b, 24, 2)]
    assert b.cached_tokens == 24 and b.block_table[:6] == a.block_table[:6]
    assert scheduler.allocator.hit_tokens == 24 and scheduler.allocator.queried_tokens == 27 + 26


def test_a_failed_step_unpublishes_its_blocks():
    scheduler = make(blocks=16, block_size=4, max_seqs=4, max_batched_tokens=64)
    a = seq(9)
    scheduler.add(a)
    scheduler.schedule()
    scheduler.allocator.forget_step()  # the forward pass raised
    scheduler.finish(a, "error")
    b = seq(9)
    scheduler.add(b)
    scheduler.schedule()
    assert b.cached_tokens == 0  # nothing of a's never-computed blocks is shared


def test_finishing_frees_every_block_and_sharing_keeps_them_cached():
    scheduler = make(blocks=16, block_size=4, max_seqs=4, max_batched_tokens=64)
    a = seq(13)
    scheduler.add(a)
    run(scheduler, scheduler.schedule())
    scheduler.finish(a, "stop")
    assert scheduler.allocator.num_free == 16 and a.block_table == [] and a.finish_reason == "stop"
    again = seq(13)
    scheduler.add(again)
    scheduler.schedule()
    assert again.cached_tokens == 12


def test_pacing_caps_prompt_chunks_while_streams_decode():
    scheduler = make(max_seqs=4, max_batched_tokens=64, decode_slowdown=2.0)
    stream = seq(4)
    scheduler.add(stream)
    run(scheduler, scheduler.schedule())
    scheduler.pacer.record(0.004, decodes=1, prompt_tokens=0)  # a decode step: 4 ms
    scheduler.pacer.record(0.012, decodes=1, prompt_tokens=40)  # 0.2 ms a prompt token
    long = seq(200, first=9000)
    scheduler.add(long)
    chunks = scheduler.schedule()
    assert [(c.seq, c.count) for c in chunks] == [(stream, 1), (long, 20)]  # (2 - 1) · 4 ms / 0.2 ms


def test_pacer_arithmetic_and_its_checks():
    pacer = Pacer(slowdown=3.0, max_tokens=512, min_tokens=16)
    assert pacer.budget(decoding=True) == 512  # nothing measured yet: no decode time to protect
    pacer.record(0.005, decodes=2, prompt_tokens=0)
    assert pacer.budget(decoding=True) == 32  # decodes timed, no paced step yet: a first guess
    pacer.record(0.105, decodes=2, prompt_tokens=100)  # 1 ms a token on top of the 5 ms decode step
    assert pacer.budget(decoding=True) == 16  # (3 - 1) · 5 / 1 = 10, raised to the floor
    assert pacer.budget(decoding=False) == 512  # no stream to protect: full-speed prefill
    assert Pacer(slowdown=0).budget(decoding=True) == 512
    with pytest.raises(ValueError, match="slowdown"):
        Pacer(slowdown=0.5)


def test_the_pacer_follows_a_prompt_token_cost_that_grows_with_context():
    pacer = Pacer(slowdown=2.0, max_tokens=512, min_tokens=1)
    pacer.record(0.004, decodes=1, prompt_tokens=0)  # a decode step: 4 ms, so 4 ms of prompt work per step
    caps, steps = [], []
    context = 0
    while context < 4096:  # a prompt token costs 0.1 ms plus 0.25 ms per 1k tokens of context, beside 0.5 ms
        tokens = pacer.budget(decoding=True)
        step = 0.004 + 0.0005 + tokens * (0.0001 + 0.00025 * context / 1024)
        pacer.record(step, decodes=1, prompt_tokens=tokens)
        caps.append(tokens)
        steps.append(step)
        context += tokens
    assert caps[0] == 32 and caps[-1] <= 4  # 3.5 tokens fit at 4k of context
    assert max(steps[10:]) < 2.3 * 0.004  # once settled, steps stay near twice a decode step (a small lag)
    assert max(steps) < 3 * 0.004
    before = pacer.tokens
    pacer.record(0.5, decodes=1, prompt_tokens=caps[-1])  # one very slow step (another process's)
    assert pacer.tokens >= 0.8 * before  # moves the cap by a fraction, not to the floor
    assert Pacer().budget(decoding=True) == 512 and Pacer().min_tokens == 4


@pytest.mark.parametrize(
    "kwargs", [{"max_seqs": 0}, {"max_seqs": 8, "max_batched_tokens": 4}, {"decode_slowdown": 1.0}]
)
def test_scheduler_config_is_validated(kwargs):
    with pytest.raises(ValueError):
        SchedulerConfig(**kwargs)
