"""Decode steps on static buffers (the CUDA-graph path, run eagerly here): the ladder's sizes, and the same
greedy tokens as the eager path for batches padded to a ladder size, with a sliding window and int8."""

from __future__ import annotations

import queue

import pytest

torch = pytest.importorskip("torch")

from kvcache.engine.engine import Engine, EngineConfig  # noqa: E402
from kvcache.engine.graphs import DecodeGraphs, batch_ladder, key_ladder, pick  # noqa: E402
from kvcache.engine.sequence import Sequence  # noqa: E402
from kvcache.params import GenerationParams  # noqa: E402
from tests.support.kvcache_checkpoints import checkpoint, one_torch_thread, prompt_ids  # noqa: E402, F401

pytestmark = pytest.mark.local


def test_the_ladders_and_the_pick():
    assert batch_ladder(64) == (1, 2, 4, 8, 16, 32, 48, 64)
    assert batch_ladder(5) == (1, 2, 4, 5) and batch_ladder(1) == (1,)
    assert key_ladder(8192, 16) == (256, 512, 1024, 2048, 4096, 8192)
    assert key_ladder(1000, 16) == (256, 512, 1008) and key_ladder(100, 16) == (112,)
    assert pick((1, 2, 4, 8), 3) == 4 and pick((1, 2, 4, 8), 8) == 8 and pick((1, 2, 4, 8), 9) is None


def test_capture_needs_cuda():
    eng = Engine(EngineConfig(model_path=str(checkpoint("llama3")), device="cpu", threads=1, max_context=64))
    with pytest.raises(ValueError, match="CUDA graphs need the model and pool on a CUDA device"):
        DecodeGraphs(eng.model, eng.pool, 4, capture=True)
    assert eng.runner.graphs is None  # the CPU engine never takes the static path by itself
    eng.close()


def _generate(name: str, static: bool, count: int, graphs=None, **config) -> tuple[list[list[int]], int]:
    eng = Engine(
        EngineConfig(
            model_path=str(checkpoint(name)), device="cpu", threads=1, max_context=256, block_size=4, **config
        )
    )
    if static:
        eng.runner.graphs = DecodeGraphs(eng.model, eng.pool, eng.config.max_seqs, capture=False)
        if graphs is not None:
            graphs(eng.runner.graphs)
    prompts = [prompt_ids(3 + 11 * i, seed=40 + i) for i in range(count)]
    # every request queued before the loop's first step: the same batches on both paths, whatever the
    # threads' timing (requests started from threads met the loop at different steps now and then, and
    # int8 steps of other batch shapes may round a tie the other way)
    events = [queue.SimpleQueue() for _ in prompts]
    seqs = [Sequence(p, GenerationParams(max_new_tokens=40), 40, q.put) for p, q in zip(prompts, events)]
    assert eng.loop._thread is None  # the loop starts at the first add
    for seq in seqs[:-1]:
        eng.loop.scheduler.add(seq)
    eng.loop.add(seqs[-1])
    out = [list(iter(q.get, None)) for q in events]
    assert all(s.error is None for s in seqs)
    steps = eng.runner.graph_steps
    eng.close()
    return out, steps


@pytest.mark.parametrize(
    "name, config", [("llama3", {}), ("mistral", {}), ("qwen2", {}), ("llama3", {"kv_cache": "int8"})]
)
def test_the_static_path_gives_the_eager_paths_tokens(name, config):
    eager, none = _generate(name, False, 5, **config)
    static, steps = _generate(name, True, 5, **config)  # 5 rows run padded to 8; mistral's window is 8
    assert none == 0 and steps > 30
    assert static == eager and all(len(t) == 40 for t in static)


def test_a_one_token_chunk_mid_prompt_does_not_sample_on_the_static_path():
    # two tokens a step, two seats: a decode plus one token of another prompt, a step of one-token chunks
    # of which one is mid-prompt (it must not sample: the eager path's tokens)
    eager, _ = _generate("llama3", False, 3, max_seqs=2, max_batched_tokens=2)
    static, steps = _generate("llama3", True, 3, max_seqs=2, max_batched_tokens=2)
    assert steps > 30 and static == eager


def test_a_capture_that_fails_turns_capture_off_and_decodes_eagerly(caplog):
    def failing(graphs: DecodeGraphs) -> None:
        def capture(sized):
            raise RuntimeError("operation not permitted when stream is capturing\nmore")

        graphs.capture, graphs._capture = True, capture  # as on CUDA, with a kernel that cannot be captured

    seen: list[DecodeGraphs] = []
    eager, _ = _generate("llama3", False, 3)
    static, steps = _generate("llama3", True, 3, graphs=lambda g: (seen.append(g), failing(g)))
    assert static == eager and steps > 30
    graphs = seen[0]
    assert not graphs.capture and graphs.captured == 0
    assert graphs.capture_error == "RuntimeError: operation not permitted when stream is capturing"
    assert "CUDA graph capture failed" in caplog.text
