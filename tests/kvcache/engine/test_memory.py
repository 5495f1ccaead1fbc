"""The pool's size and the start banner's arithmetic: the same numbers ``prefixgate kv`` prints
(``analyzer.kv``), sized from --kv-memory (a size or a fraction of free memory), --kv-blocks or the
device's default; too small a pool and conflicting flags are clear errors."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("torch")

from analyzer import kv, kv_cli  # noqa: E402
from kvcache.engine.memory import CUDA_FRACTION, default_blocks, parse_kv_memory, plan_pool  # noqa: E402
from kvcache.errors import EngineError  # noqa: E402
from kvcache.models.shapes import shape_config  # noqa: E402

pytestmark = pytest.mark.local
GIB = 2**30


def test_kv_memory_is_a_fraction_or_a_size():
    assert parse_kv_memory("0.8") == ("fraction", 0.8)
    assert parse_kv_memory("80%") == ("fraction", 0.8)
    assert parse_kv_memory("1") == ("fraction", 1.0)
    assert parse_kv_memory("40GiB") == ("bytes", 40 * GIB)
    assert parse_kv_memory("16GB") == ("bytes", 16e9)
    for bad in ("0", "150%", "-1", "lots"):
        with pytest.raises(ValueError):
            parse_kv_memory(bad)


def test_the_banner_agrees_with_prefixgate_kv_for_llama_3_8b_in_bf16():
    config = shape_config("llama-3-8b")
    plan = plan_pool(config, 2, 16, 8192, free=100 * GIB, on_gpu=True, kv_memory="40GiB", context=4096)
    calculator = kv_cli.compute(  # what `prefixgate kv --model llama-3-8b --tokens 4096` prints
        model="llama-3-8b",
        tokens="4096",
        **dict.fromkeys(("layers", "kv_heads", "head_dim", "window", "gpu_memory", "weights", "bandwidth")),
        batch=1,
        bits=16,
    )
    assert plan.bytes_per_token == calculator["bytes_per_token"] == 131072  # 2·32·8·128·2
    assert plan.blocks == 40 * GIB // (131072 * 16)
    assert plan.conversations == kv.conversations_that_fit(
        plan.pool_bytes, 0, calculator["bytes_per_conversation"]
    )
    assert plan.conversations == 80
    banner = plan.banner()
    assert "131,072 B per token" in banner and f"{plan.blocks:,} blocks of 16 tokens" in banner
    assert "80 conversations of 4,096 tokens fit" in banner and "--kv-memory 40GiB" in banner


def test_a_fraction_takes_that_share_of_free_memory_and_the_gpu_default_is_its_own():
    config = shape_config("llama-3-8b")
    half = plan_pool(config, 2, 16, 8192, free=64 * GIB, on_gpu=True, kv_memory="0.5")
    assert half.blocks == int(0.5 * 64 * GIB // (131072 * 16)) and "0.5 of 64.00 GiB free" in half.banner()
    default = plan_pool(config, 2, 16, 8192, free=64 * GIB, on_gpu=True)
    assert default.blocks == int(CUDA_FRACTION * 64 * GIB // (131072 * 16))
    assert default.context == 8192 and default.conversations == math.floor(
        default.pool_bytes / (131072 * 8192)
    )


def test_the_cpu_default_is_unchanged_and_kv_blocks_wins():
    config = shape_config("demo")
    cpu = plan_pool(config, 4, 16, 8192, free=64 * GIB, on_gpu=False)
    assert cpu.blocks == default_blocks(config.kv_bytes_per_token(4), 8192, 16) == 4 * 512
    assert plan_pool(config, 4, 16, 8192, free=1, on_gpu=False, kv_blocks=600).blocks == 600


def test_a_sliding_window_caps_the_tokens_a_conversation_keeps():
    mistral = shape_config("mistral-7b")
    plan = plan_pool(mistral, 2, 16, 32768, free=80 * GIB, on_gpu=True, kv_memory="8GiB", context=32768)
    assert plan.tokens_kept == 4096 and plan.conversations == plan.pool_bytes // (plan.bytes_per_token * 4096)
    assert "a sliding window keeps 4,096" in plan.banner()


def test_int8_scales_are_counted_beside_the_formula():
    config = shape_config("llama-3-8b")
    plan = plan_pool(config, 1, 16, 8192, free=0, on_gpu=True, kv_memory="1GiB", side_bytes_per_token=1024)
    assert plan.bytes_per_token == 65536 and plan.blocks == GIB // ((65536 + 1024) * 16)
    assert "+ 1024 B of scales" in plan.banner()


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"kv_memory": "1MiB"}, "is less than one context (8192 tokens); give --kv-memory more"),
        ({"kv_blocks": 2}, "--kv-blocks 2 × --block-size 16 = 32 tokens is less than one context"),
        ({"kv_blocks": 600, "kv_memory": "1GiB"}, "give --kv-memory or --kv-blocks, not both"),
    ],
)
def test_bad_pools_are_clear_errors(kwargs, message):
    with pytest.raises(EngineError, match=message.replace("(", r"\(").replace(")", r"\)")):
        plan_pool(shape_config("demo"), 4, 16, 8192, free=64 * GIB, on_gpu=True, **kwargs)
