"""``prefixgate bench rewrite`` at tiny sizes: real emulator + proxy, the JSON's shape and its
direction (aggressive caches what off cannot; safe recovers the tool-order loss)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from proxy.bench.agent_workload import conversation
from proxy.bench.rewrite import VARIANTS, bench_rewrite_command

pytestmark = pytest.mark.e2e


def test_the_workload_is_deterministic_and_volatile_where_asked():
    a, b = list(conversation("openai", 3, seed=5)), list(conversation("openai", 3, seed=5))
    assert a == b
    ideal = list(conversation("anthropic", 3, volatile=False))
    assert ideal[0]["system"] == ideal[2]["system"] and ideal[0]["tools"] == ideal[2]["tools"]
    assert a[0]["messages"][0] != a[1]["messages"][0]  # the clock ticked, the id changed


def test_bench_rewrite_shape_and_direction():
    result = CliRunner().invoke(bench_rewrite_command, ["--conversations", "1", "--turns", "4", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    for provider in ("openai", "anthropic"):
        rows = data["results"][provider]
        assert set(rows) == set(VARIANTS)
        for row in rows.values():
            assert row["requests"] == 4 and 0 <= row["cached_tokens"] <= row["prompt_tokens"] and row["cost_usd"] > 0
        assert rows["off"]["cached_tokens"] == 0 and rows["aggressive"]["cached_tokens"] > 0
        assert rows["aggressive"]["of_ideal"] >= 0.9
        assert rows["tools-only safe"]["cached_tokens"] == rows["ideal"]["cached_tokens"] > rows["tools-only off"]["cached_tokens"]
