"""``prefixgate bench server`` at tiny sizes on a tiny checkpoint: the JSON's shape and consistency, and
the table (not its speed: that is the README's, measured on the reference machine)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("openai")

from click.testing import CliRunner  # noqa: E402

from kvcache.bench.server import bench_server_command  # noqa: E402
from tests.support.kvcache_checkpoints import checkpoint  # noqa: E402
from tests.support.servers import free_port  # noqa: E402

pytestmark = [pytest.mark.local, pytest.mark.e2e]
ISSUE_KEYS = (
    "streams",
    "sequential_tokens_per_s",
    "batched_tokens_per_s",
    "speedup",
    "identical",
    "cold_ttft_s",
    "warm_ttft_s",
    "itl_p99_idle_s",
    "itl_p99_during_prefill_s",
)


def test_bench_server_json_has_the_issue_keys_and_consistent_numbers():
    args = [
        "--model",
        str(checkpoint("llama3")),
        "--json",
        "--threads",
        "1",
        "--streams",
        "3",
        "--new-tokens",
        "6",
        "--system-tokens",
        "48",
        "--turn-tokens",
        "6",
        "--long-prompt-tokens",
        "150",
        "--rounds",
        "1",
        "--port",
        str(free_port()),
    ]
    result = CliRunner().invoke(bench_server_command, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert all(key in data for key in ISSUE_KEYS)
    assert data["streams"] == 3 and data["threads"] == 1 and data["identical"] is True
    assert data["speedup"] == pytest.approx(data["batched_tokens_per_s"] / data["sequential_tokens_per_s"])
    assert 0 < data["sequential_tokens"] == data["batched_tokens"] <= 18
    assert 0 < data["warm_ttft_s"] and 0 < data["cold_ttft_s"] and data["no_sharing_warm_ttft_s"] > 0
    assert data["itl_p99_idle_s"] > 0 and data["itl_p99_during_prefill_s"] > 0
    assert data["unchunked_itl_max_during_prefill_s"] > 0 and data["long_prompt_s"] > 0
