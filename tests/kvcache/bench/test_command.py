"""``prefixgate bench engine`` at tiny sizes: the JSON's shape and internal consistency (not its speed)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from click.testing import CliRunner  # noqa: E402

from kvcache.bench.command import bench_engine_command  # noqa: E402
from tests.support.kvcache_checkpoints import checkpoint  # noqa: E402

pytestmark = pytest.mark.local


def test_bench_json_is_complete_and_consistent():
    args = [
        "--model",
        str(checkpoint("mistral")),
        "--json",
        "--threads",
        "1",
        "--prompt-tokens",
        "12",
        "--new-tokens",
        "6",
        "--contexts",
        "16,32,1000",
        "--context-new-tokens",
        "3",
        "--bandwidth-mb",
        "8",
    ]
    result = CliRunner().invoke(bench_engine_command, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["prompt_tokens"] == 12 and data["new_tokens"] == 6 and data["threads"] == 1
    assert data["identical"] is True and data["hf_identical"] is True
    assert data["speedup"] == pytest.approx(data["no_cache_s"] / data["cache_s"])
    assert data["decode_vs_hf"] == pytest.approx(data["decode_tokens_per_s"] / data["hf_decode_tokens_per_s"])
    assert data["decode_tokens_per_s"] > 0 and data["hf_decode_tokens_per_s"] > 0
    assert [row["context"] for row in data["contexts"]] == [16, 32, 1000]
    assert all(row["prefill_tokens_per_s"] > 0 for row in data["contexts"][:2])
    assert "beyond the model's context (256)" in data["contexts"][2]["skipped"]
    bw = data["bandwidth"]
    assert (
        bw["bytes_read_per_decode_token"]
        == bw["weight_bytes"] + bw["kv_bytes_per_token"] * bw["mean_context"]
    )
    assert bw["achieved_gb_per_s"] > 0 and bw["measured_copy_gb_per_s"] > 0
    assert bw["kv_bytes_per_token"] == 2 * 2 * 2 * 16 * 4  # 2·L·H_kv·d·4 bytes


def test_bench_prints_tables_without_json():
    args = [
        "--model",
        str(checkpoint("llama3")),
        "--prompt-tokens",
        "8",
        "--new-tokens",
        "3",
        "--contexts",
        "16",
        "--context-new-tokens",
        "2",
        "--no-transformers",
        "--bandwidth-mb",
        "8",
    ]
    result = CliRunner().invoke(bench_engine_command, args)
    assert result.exit_code == 0, result.output
    assert "KV cache vs none" in result.output and "Prefill and decode by context" in result.output
