"""The engine on a CUDA device (marked ``cuda``: run where CUDA is present, skipped elsewhere): decode steps
replayed as CUDA graphs give the eager path's greedy tokens, the pool lives on the device sized by
--kv-memory, and the device suite runs small."""

from __future__ import annotations

import threading

import pytest

torch = pytest.importorskip("torch")

from kvcache.engine.engine import Engine, EngineConfig  # noqa: E402
from kvcache.params import GenerationParams  # noqa: E402
from tests.support.kvcache_checkpoints import checkpoint, needs_cuda, prompt_ids  # noqa: E402

pytestmark = [pytest.mark.local, *needs_cuda]


def _generate(name: str, graphs: bool, dtype: str, count: int = 6) -> tuple[list[list[int]], Engine]:
    eng = Engine(
        EngineConfig(
            model_path=str(checkpoint(name)),
            device="cuda",
            dtype=dtype,
            max_context=256,
            block_size=4,
            kv_memory="16MiB",
            cuda_graphs=graphs,
        )
    )
    prompts = [prompt_ids(3 + 11 * i, seed=40 + i) for i in range(count)]
    out: list = [None] * count

    def run(i: int) -> None:
        out[i] = list(eng.run(prompts[i], GenerationParams(max_new_tokens=40)))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    eng.close()
    return out, eng


@pytest.mark.parametrize("name", ["llama3", "mistral"])
def test_graph_replays_give_the_eager_tokens_in_fp32(name):
    eager, plain = _generate(name, False, "fp32")
    graphed, eng = _generate(name, True, "fp32")
    assert plain.runner.graphs is None and eng.runner.graph_steps > 30 and eng.runner.graphs.captured >= 1
    assert graphed == eager


def test_the_pool_is_on_the_device_and_bf16_is_the_default():
    eng = Engine(EngineConfig(model_path=str(checkpoint("llama3")), max_context=256, kv_memory="8MiB"))
    assert eng.device.type == "cuda" and eng.pool.kv.is_cuda and eng.model.dtype == torch.bfloat16
    assert eng.plan.blocks == 8 * 2**20 // (eng.plan.bytes_per_token * 16) and "8MiB" in eng.banner()
    assert list(eng.run(prompt_ids(20), GenerationParams(max_new_tokens=5)))
    eng.close()


def test_the_device_suite_runs_small_on_cuda(tmp_path):
    from kvcache.bench import gpu

    out = tmp_path / "suite.json"
    argv = [
        "--device",
        "cuda",
        "--shape",
        "tiny",
        "--batches",
        "1,4",
        "--prompt-tokens",
        "16",
        "--new-tokens",
        "16",
    ]
    argv += [
        "--prefix-tokens",
        "512",
        "--conversation-tokens",
        "1024",
        "--kv-memory",
        "64MiB",
        "--out",
        str(out),
    ]
    assert gpu.main(argv) == 0
    import json

    r = json.loads(out.read_text())
    assert r["graph_steps"] > 0 and r["identity"]["rows"] and r["pool"]["held_conversations"] > 0
