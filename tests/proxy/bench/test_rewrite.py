"""``prefixgate bench rewrite`` at tiny sizes: real emulator + proxy, the JSON's shape and its
direction (aggressive caches what off cannot; safe recovers the tool-order loss; on GPT-5.6,
safe reads the codex pattern's head as the self-marking app does and never loses to off)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from proxy.bench.agent_workload import conversation
from proxy.bench.gpt56_workload import CHAT, RESPONSES, agent_loop, codex
from proxy.bench.rewrite import VARIANTS, bench_rewrite_command
from proxy.bench.rewrite_gpt56 import VARIANTS as GPT56_VARIANTS
from proxy.bench.rewrite_gpt56 import WORKLOADS

pytestmark = pytest.mark.e2e


def test_the_workload_is_deterministic_and_volatile_where_asked():
    a, b = list(conversation("openai", 3, seed=5)), list(conversation("openai", 3, seed=5))
    assert a == b
    ideal = list(conversation("anthropic", 3, volatile=False))
    assert ideal[0]["system"] == ideal[2]["system"] and ideal[0]["tools"] == ideal[2]["tools"]
    assert a[0]["messages"][0] != a[1]["messages"][0]  # the clock ticked, the id changed


def test_bench_rewrite_shape_and_direction():
    result = CliRunner().invoke(
        bench_rewrite_command,
        ["--conversations", "1", "--turns", "4", "--codex-requests", "3", "--json"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    for provider in ("openai", "anthropic"):
        rows = data["results"][provider]
        assert set(rows) == set(VARIANTS)
        for row in rows.values():
            assert (
                row["requests"] == 4
                and 0 <= row["cached_tokens"] <= row["prompt_tokens"]
                and row["cost_usd"] > 0
            )
        assert rows["off"]["cached_tokens"] == 0 and rows["aggressive"]["cached_tokens"] > 0
        assert rows["aggressive"]["of_ideal"] >= 0.9
        assert (
            rows["tools-only safe"]["cached_tokens"]
            == rows["ideal"]["cached_tokens"]
            > rows["tools-only off"]["cached_tokens"]
        )
    gpt56 = data["gpt-5.6"]
    assert set(gpt56) == set(WORKLOADS)
    for workload, apis in gpt56.items():
        assert set(apis) == {CHAT, RESPONSES}
        for api, rows in apis.items():
            assert set(rows) == set(GPT56_VARIANTS)
            for row in rows.values():
                assert row["requests"] == (3 if workload == "codex" else 4) and row["cost_usd"] > 0
                assert 0 <= row["cached_tokens"] <= row["prompt_tokens"] and row["cache_write_tokens"] > 0
            assert rows["safe"]["cached_tokens"] >= rows["off"]["cached_tokens"], (
                workload,
                api,
            )  # never below off
    for api in (CHAT, RESPONSES):
        codex_rows = gpt56["codex"][api]
        assert (
            codex_rows["off"]["cached_tokens"] == 0
        )  # only the implicit breakpoint, at the changing user message
        assert (
            codex_rows["safe"]["of_ideal"] >= 0.9
            and codex_rows["safe"]["cost_usd"] < 0.5 * codex_rows["off"]["cost_usd"]
        )
        assert gpt56["agent"][api]["aggressive"]["of_ideal"] >= 0.9


def test_the_gpt56_workloads_are_deterministic_and_shaped_per_api():
    for api in (CHAT, RESPONSES):
        assert list(codex(api, 3)) == list(codex(api, 3)) and list(agent_loop(api, 3)) == list(
            agent_loop(api, 3)
        )
        one, two = list(codex(api, 2))
        field = "messages" if api == CHAT else "input"
        assert (
            one["tools"] == two["tools"]
            and one[field][:-1] == two[field][:-1]
            and one[field][-1] != two[field][-1]
        )
        ideal = next(codex(api, 1, marked=True))
        assert "prompt_cache_breakpoint" in str(ideal[field][0]) and "instructions" not in ideal
    responses = next(codex(RESPONSES, 1))
    assert (
        responses["store"] is False
        and isinstance(responses["instructions"], str)
        and len(responses["instructions"]) > 30_000
    )
    grown = list(agent_loop(CHAT, 3))
    assert [len(b["messages"]) for b in grown] == [2, 4, 6] and grown[0]["messages"][0]["role"] == "system"
